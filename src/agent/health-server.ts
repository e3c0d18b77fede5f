/**
 * The agent's /healthz (the process is alive), /readyz (its TaskSet watch has synced) and
 * /metrics, on a port of its own so the kubelet's probes never queue behind plugin work.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface HealthSources {
  ready: () => boolean;
  registry: Registry;
}

export async function startHealthServer(port: number, src: HealthSources, host = '0.0.0.0'): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    if (src.ready()) return { status: 'ready' };
    return reply.code(503).send({ status: 'not ready', reason: 'the TaskSet watch has not synced yet' });
  });
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', src.registry.contentType);
    return src.registry.metrics();
  });
  await app.listen({ port, host });
  return app;
}
