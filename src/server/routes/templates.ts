/**
 * WorkflowTemplates and ClusterWorkflowTemplates over REST, with the peer's paths and body form,
 * each call made with the caller's identity (src/operations/templates.ts does the work):
 *
 *   GET    /api/v1/workflow-templates/{namespace}            ?listOptions.labelSelector=…
 *   POST   /api/v1/workflow-templates/{namespace}            {template}
 *   POST   /api/v1/workflow-templates/{namespace}/lint       {template}  → it, as it would be stored, or 400 naming each problem
 *   GET    /api/v1/workflow-templates/{namespace}/{name}
 *   PUT    /api/v1/workflow-templates/{namespace}/{name}     {template}
 *   DELETE /api/v1/workflow-templates/{namespace}/{name}     → {}
 *   … and the same under /api/v1/cluster-workflow-templates without {namespace}.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isJsonObject as isObject } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { Templates, type TemplateKind } from '../../operations/index.js';
import { badRequest } from '../errors.js';

type Req = FastifyRequest<{ Params: { namespace?: string; name?: string }; Querystring: Record<string, unknown> }>;

function templateOf(body: unknown): unknown {
  if (!isObject(body) || body.template === undefined) throw badRequest('the body must carry the template: {"template": {…}}');
  return body.template;
}

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function templateRoutes(app: FastifyInstance, kube: KubeClient): void {
  const routes: [TemplateKind, string][] = [
    ['WorkflowTemplate', '/api/v1/workflow-templates/:namespace'],
    ['ClusterWorkflowTemplate', '/api/v1/cluster-workflow-templates'],
  ];
  for (const [kind, base] of routes) {
    const of = (req: Req) => new Templates(kube.as(req.caller.identity), kind, req.params.namespace);
    app.get(base, async (req: Req) => {
      const sel = req.query['listOptions.labelSelector'];
      return of(req).list(typeof sel === 'string' && sel ? sel : undefined);
    });
    app.post(base, async (req: Req) => of(req).create(templateOf(req.body)));
    app.post(`${base}/lint`, async (req: Req) => of(req).lint(templateOf(req.body)));
    app.get(`${base}/:name`, async (req: Req) => of(req).get(req.params.name!));
    app.put(`${base}/:name`, async (req: Req) => of(req).update(req.params.name!, templateOf(req.body)));
    app.delete(`${base}/:name`, async (req: Req) => {
      await of(req).delete(req.params.name!);
      return {};
    });
  }
}
