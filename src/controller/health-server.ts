/**
 * `/healthz`, `/readyz` and `/metrics` of a long-running process on plain node:http (three
 * fixed routes do not need a framework). `/readyz` runs every readiness check and answers 503
 * naming the ones that fail, so a probe failure says why in the pod's events.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Refusal } from '../kube/request-authorizer.js';
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

export async function startHealthServer(checks: HealthChecks, port: number, host = '0.0.0.0'): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
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
