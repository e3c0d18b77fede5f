/**
 * The server's front (app.ts with the event endpoint, the workflow and health routes and every
 * limit of limits.ts) on a real socket, in front of a stand-in API server that counts access
 * reviews: what the hardening tests attack. Plain HTTP/1.1, or with `tls` HTTP/2 over TLS (and
 * HTTP/1.1) with a generated certificate, as the server runs by default. Test support.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import winston from 'winston';
import { generateSelfSigned } from '../../tls/tls-material.js';
import { OWN_TOKEN, startApiStandIn, statusReply } from '../../kube/testing/api-stand-in.js';
import { buildApp } from '../app.js';
import { Authenticator, type AuthOptions } from '../auth.js';
import type { DispatchResult, EventJob } from '../dispatch.js';
import { EventQueue } from '../event-queue.js';
import { BodyBudget, LIMIT_DEFAULTS, type ServerLimits } from '../limits.js';
import { ServerMetrics } from '../metrics.js';
import { createEventHandler } from '../routes/events.js';
import { healthRoutes } from '../routes/health.js';
import { workflowRoutes } from '../routes/workflows.js';

const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });

/** The API server: tokens "good-…" may do anything, "denied-…" nothing, others are unknown (401). */
export async function standIn() {
  const seen = { reviews: 0, creates: 0 };
  const api = await startApiStandIn((req) => {
    const token = req.token === OWN_TOKEN ? 'server' : (req.token ?? '');
    if (req.path.endsWith('/selfsubjectaccessreviews')) {
      seen.reviews++;
      // A service-account-shaped (JWT) token is "good" when its payload part is.
      if (token.startsWith('good') || token.split('.')[1]?.startsWith('good') || token === 'server')
        return { status: 201, body: { status: { allowed: true } } };
      if (token.startsWith('denied')) return { status: 201, body: { status: { allowed: false } } };
      return statusReply(401, 'Unauthorized', 'Unauthorized');
    }
    if (req.method === 'POST') {
      seen.creates++;
      return { status: 201, body: req.body };
    }
    return statusReply(404, 'NotFound', 'not found');
  });
  return { kube: api.client, seen, close: () => api.close() };
}

export interface Running {
  app: FastifyInstance;
  port: number;
  seen: { reviews: number; creates: number };
  budget: BodyBudget;
}

export const MAX_BODY = 1024 * 1024;

export async function startFront(
  limits: Partial<ServerLimits> = {},
  authOptions: Partial<AuthOptions> = {},
  o: { tls?: boolean } = {},
): Promise<Running> {
  const { kube, seen, close } = await standIn();
  const auth = new Authenticator({ mode: 'client', kube, ...authOptions });
  const all: ServerLimits = { ...LIMIT_DEFAULTS, lingerMs: 300, ...limits };
  const budget = new BodyBudget(all.maxBodiesInFlightBytes);
  const metrics = new ServerMetrics(false);
  const queue = new EventQueue<EventJob, DispatchResult>({ capacity: 8, workers: 1, handle: async () => ({ workflows: [], errors: [] }) });
  const events = createEventHandler({
    auth,
    queue,
    metrics,
    logger,
    mode: 'async',
    maxBodyBytes: MAX_BODY,
    budget,
    lingerMs: all.lingerMs,
  });
  const tls = o.tls ? await generateSelfSigned() : undefined;
  const app = buildApp(tls, MAX_BODY, logger, metrics, events, { auth, budget, limits: all });
  await app.register(healthRoutes, { notReady: () => undefined });
  await app.register(workflowRoutes, { kube, auth });
  app.addHook('onClose', close);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port, seen, budget };
}
