/**
 * `/healthz`, `/readyz` and `/metrics` of every long-running process — the controller, the
 * agent, the server's metrics port — on plain node:http (three fixed routes do not need a
 * framework, and the agent pod need not load one). `/readyz` runs every readiness check and
 * answers 503 naming the ones that fail, so a probe failure says why in the pod's events.
 */
import { createServer, type IncomingMessage, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Refusal } from './request-authorizer.js';
import { errorMessage } from '../log/error-message.js';

export interface HealthChecks {
  /** Liveness: a message when the process is broken beyond repair, undefined when fine. */
  live(): string | undefined;
  /** Readiness problems; empty when ready. */
  ready(): string[];
  metrics(): Promise<string>;
  metricsContentType: string;
  /**
   * Who may read /metrics (request-authorizer.ts): undefined allows the request, a refusal is
   * answered as is. Absent: /metrics is open (`--metrics-auth=none`).
   */
  authorizeMetrics?(authorization: string | undefined): Promise<Refusal | undefined>;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** Always live, always ready: a process whose only endpoint that matters is /metrics. */
export const NO_CHECKS: Pick<HealthChecks, 'live' | 'ready'> = { live: () => undefined, ready: () => [] };

export async function startHealthServer(
  checks: HealthChecks,
  port: number,
  host = '0.0.0.0',
  /** Connection limits and timeouts: server options, applied before it listens, called on each request. */
  limits?: { options?: ServerOptions; configure?(server: Server): void; onRequest?(req: IncomingMessage): void },
): Promise<HealthServer> {
  const server: Server = createServer(limits?.options ?? {}, (req, res) => {
    limits?.onRequest?.(req);
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/healthz' || path === '/livez') {
      const problem = checks.live();
      return problem ? reply(503, `not healthy: ${problem}\n`) : reply(200, 'ok\n');
    }
    if (path === '/readyz') {
      const problems = checks.ready();
      return problems.length ? reply(503, `not ready:\n${problems.map((p) => `- ${p}`).join('\n')}\n`) : reply(200, 'ok\n');
    }
    if (path === '/metrics') {
      const allowed = checks.authorizeMetrics ? checks.authorizeMetrics(req.headers.authorization) : Promise.resolve(undefined);
      allowed
        .then(async (refusal) => {
          if (refusal) return reply(refusal.status, `${refusal.message}\n`);
          reply(200, await checks.metrics(), checks.metricsContentType);
        })
        .catch((err: unknown) => reply(500, `metrics failed: ${errorMessage(err)}\n`));
      return;
    }
    reply(404, 'not found\n');
  });
  server.keepAliveTimeout = 5_000;
  limits?.configure?.(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
