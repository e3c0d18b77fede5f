/**
 * `/healthz` (the process answers), `/readyz` (the binding cache is synced and the server is not
 * shutting down: send it traffic) and `/metrics` (Prometheus text). None needs a token.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerMetrics } from '../metrics.js';

export interface HealthDeps {
  metrics: ServerMetrics;
  /** Why the server is not ready, or undefined when it is. */
  notReady: () => string | undefined;
}

export async function healthRoutes(app: FastifyInstance, deps: HealthDeps): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const why = deps.notReady();
    if (why) return reply.code(503).send({ status: 'not ready', reason: why });
    return { status: 'ok' };
  });
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
