/**
 * The limits of ConfigMap semaphores, with the peer's paths and bodies (`argo sync …`), as the
 * caller (src/operations/sync-limits.ts does the work):
 *
 *   POST   /api/v1/sync/{namespace}         {cmName, key, limit, type?: CONFIGMAP}  → {namespace, cmName, key, limit, type}
 *   GET    /api/v1/sync/{namespace}/{key}   ?cmName=…&type=CONFIGMAP                → the same
 *   PUT    /api/v1/sync/{namespace}/{key}   {cmName, limit, type?}                  → the same
 *   DELETE /api/v1/sync/{namespace}/{key}   ?cmName=…&type=CONFIGMAP                → {}
 *
 * The DATABASE type is refused with 400: plugflow keeps semaphore limits in ConfigMaps only.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isJsonObject } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { SyncLimits, syncRequest } from '../../operations/index.js';

type Req = FastifyRequest<{ Params: { namespace: string; key?: string }; Querystring: Record<string, unknown>; Body: unknown }>;

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function syncLimitRoutes(app: FastifyInstance, kube: KubeClient): void {
  const of = (req: Req) => new SyncLimits(kube.as(req.caller.identity), req.params.namespace);
  const body = (req: Req) => (isJsonObject(req.body) ? req.body : {});
  app.post('/api/v1/sync/:namespace', async (req: Req) => {
    const r = syncRequest(body(req), true);
    return of(req).create(r.cmName, r.key, r.limit!);
  });
  app.get('/api/v1/sync/:namespace/:key', async (req: Req) => {
    const r = syncRequest({ ...req.query, key: req.params.key }, false);
    return of(req).get(r.cmName, r.key);
  });
  app.put('/api/v1/sync/:namespace/:key', async (req: Req) => {
    const r = syncRequest({ ...body(req), key: req.params.key }, true);
    return of(req).update(r.cmName, r.key, r.limit!);
  });
  app.delete('/api/v1/sync/:namespace/:key', async (req: Req) => {
    const r = syncRequest({ ...req.query, key: req.params.key }, false);
    await of(req).delete(r.cmName, r.key);
    return {};
  });
}
