/**
 * `/healthz` (the process answers) and `/readyz` (the binding cache is synced and not stale, and the server is
 * not shutting down: send it traffic). Neither needs a token, nor says anything about tenants.
 * `/metrics` names namespaces and bindings, so it is served on its own port (metrics-server.ts).
 */
import type { FastifyInstance } from 'fastify';

export interface HealthDeps {
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
}
