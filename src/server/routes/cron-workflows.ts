/**
 * CronWorkflows over REST, with the peer's paths and body form, each call made with the caller's
 * identity (src/operations/cron-workflows.ts does the work):
 *
 *   GET    /api/v1/cron-workflows/{namespace}                 ?listOptions.labelSelector=…
 *   POST   /api/v1/cron-workflows/{namespace}                 {cronWorkflow}
 *   POST   /api/v1/cron-workflows/{namespace}/lint            {cronWorkflow}  → it, as it would be stored, or 400 naming each problem
 *   GET    /api/v1/cron-workflows/{namespace}/{name}
 *   PUT    /api/v1/cron-workflows/{namespace}/{name}          {cronWorkflow}  (metadata.resourceVersion guards a concurrent change: 409)
 *   PUT    /api/v1/cron-workflows/{namespace}/{name}/suspend
 *   PUT    /api/v1/cron-workflows/{namespace}/{name}/resume
 *   POST   /api/v1/cron-workflows/{namespace}/{name}/backfill {from, to, parallel?} → what starts (plugflow's)
 *   DELETE /api/v1/cron-workflows/{namespace}/{name}          → {}
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isJsonObject as isObject } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { CronWorkflows } from '../../operations/index.js';
import { badRequest } from '../errors.js';

type Req = FastifyRequest<{ Params: { namespace: string; name?: string }; Querystring: Record<string, unknown> }>;

function cronOf(body: unknown): unknown {
  if (!isObject(body) || body.cronWorkflow === undefined) throw badRequest('the body must carry the CronWorkflow: {"cronWorkflow": {…}}');
  return body.cronWorkflow;
}

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function cronWorkflowRoutes(app: FastifyInstance, kube: KubeClient): void {
  const base = '/api/v1/cron-workflows/:namespace';
  const of = (req: Req) => new CronWorkflows(kube.as(req.caller.identity), req.params.namespace);
  app.get(base, async (req: Req) => {
    const sel = req.query['listOptions.labelSelector'];
    return of(req).list(typeof sel === 'string' && sel ? sel : undefined);
  });
  app.post(base, async (req: Req) => of(req).create(cronOf(req.body)));
  app.post(`${base}/lint`, async (req: Req) => of(req).checked(cronOf(req.body)));
  app.get(`${base}/:name`, async (req: Req) => of(req).get(req.params.name!));
  app.put(`${base}/:name`, async (req: Req) => of(req).update(req.params.name!, cronOf(req.body)));
  app.put(`${base}/:name/suspend`, async (req: Req) => of(req).setSuspended(req.params.name!, true));
  app.put(`${base}/:name/resume`, async (req: Req) => of(req).setSuspended(req.params.name!, false));
  app.post(`${base}/:name/backfill`, async (req: Req) => {
    const body = req.body;
    if (!isObject(body)) throw badRequest('the body must be {"from": RFC 3339, "to": RFC 3339, "parallel"?: number}');
    for (const k of Object.keys(body))
      if (!['from', 'to', 'parallel'].includes(k)) throw badRequest(`${k}: unknown field of a backfill (from, to, parallel)`);
    if (body.parallel !== undefined && typeof body.parallel !== 'number') throw badRequest('parallel: must be a number');
    return of(req).backfill(req.params.name!, {
      from: body.from as string,
      to: body.to as string,
      ...(body.parallel !== undefined ? { parallel: body.parallel } : {}),
    });
  });
  app.delete(`${base}/:name`, async (req: Req) => {
    await of(req).delete(req.params.name!);
    return {};
  });
}
