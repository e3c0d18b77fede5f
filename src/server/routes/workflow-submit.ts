/**
 * Submitting a workflow from a template or a CronWorkflow, with the peer's path and body (what
 * `argo submit --from kind/name` and the peer's UI send), as the caller:
 *
 *   POST /api/v1/workflows/{namespace}/submit
 *        {namespace?, resourceKind: "WorkflowTemplate" | "wftmpl" | "ClusterWorkflowTemplate" | "cwftmpl" | "CronWorkflow" | "cronwf",
 *         resourceName, submitOptions?: {name, generateName, entryPoint, parameters: ["a=b"], labels: "a=b,c=d",
 *         annotations, serviceAccount, dryRun, serverDryRun, podPriorityClassName, priority, ownerReference}}
 *        → the workflow created (or, with dryRun, the one that would be)
 *
 * The workflow passes the same checks as `POST /api/v1/workflows/{namespace}` (shape, the
 * engine's validation with the templates it refers to, read as the caller) before it is created.
 */
import type { FastifyInstance } from 'fastify';
import { isJsonObject as isObject, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { WORKFLOWS } from '../../kube/resource.js';
import { applySubmitOptions, parseSourceKind, parseSubmitOptions, withCreator, workflowFromSource } from '../../operations/index.js';
import { badRequest } from '../errors.js';
import { validateForCreate } from '../workflow-validation.js';
import { creatorOf } from './userinfo.js';

/** Registered inside workflowRoutes: its onRequest hook checks the caller may create workflows here. */
export function workflowSubmitRoutes(app: FastifyInstance, kube: KubeClient): void {
  app.post<{ Params: { namespace: string }; Body: unknown }>('/api/v1/workflows/:namespace/submit', async (req) => {
    const { namespace } = req.params;
    const body = req.body;
    if (!isObject(body))
      throw badRequest('the request body must be a JSON object: {"resourceKind": …, "resourceName": …, "submitOptions": {…}}');
    if (body.namespace !== undefined && body.namespace !== '' && body.namespace !== namespace)
      throw badRequest(`namespace ${JSON.stringify(body.namespace)} in the body differs from "${namespace}" in the path`);
    const kind = parseSourceKind(body.resourceKind);
    if (typeof body.resourceName !== 'string' || body.resourceName === '')
      throw badRequest('resourceName is required: the name of the template or CronWorkflow to submit');
    const options = parseSubmitOptions(body.submitOptions);
    const asCaller = kube.as(req.caller.identity);
    const wf: Workflow = applySubmitOptions(await workflowFromSource(asCaller, namespace, kind, body.resourceName), options);
    await validateForCreate(asCaller, namespace, wf);
    wf.metadata = withCreator(wf.metadata, await creatorOf(kube, req.caller));
    if (options.dryRun) return wf;
    return asCaller.create<Workflow>(WORKFLOWS, namespace, wf, { dryRun: options.serverDryRun === true });
  });
}
