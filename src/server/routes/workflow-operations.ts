/**
 * Operations on one workflow, with the peer's paths, each made with the caller's identity so the
 * API server's RBAC decides (src/operations does the work for the CLI and for these routes):
 *
 *   PUT /api/v1/workflows/{namespace}/{name}/stop        {}
 *   PUT /api/v1/workflows/{namespace}/{name}/terminate   {}
 *   PUT /api/v1/workflows/{namespace}/{name}/suspend     {}
 *   PUT /api/v1/workflows/{namespace}/{name}/resume      {nodeFieldSelector?: "displayName=X" | "name=X", parameters?: ["name=value", …]}
 *   PUT /api/v1/workflows/{namespace}/{name}/retry       {restartSuccessful?: false, nodeFieldSelector?: "displayName=X"}  (Failed/Error only)
 *        nodeFieldSelector "id=<node id>" with restartSuccessful: that node and everything that follows it run
 *        again (the peer UI's retry of one node; src/operations/retry-from.ts)
 *   PUT /api/v1/workflows/{namespace}/{name}/resubmit    {memoized?: false, parameters?: ["name=value", …]}  → the new workflow
 *   PUT /api/v1/workflows/{namespace}/{name}/set         {nodeFieldSelector?, phase?, message?, outputParameters?: '{"name":"value"}'}
 *        (`argo node set`: a waiting suspend node's supplied output parameters, message, phase)
 *
 *   POST /api/v1/workflows/{namespace}/lint              {workflow}  → the workflow, or 400 naming every problem
 *
 * stop/terminate/suspend/resume answer with the workflow as stored. A workflow that has finished
 * (or has nothing waiting, for resume) is a 409 with code 9 (FailedPrecondition).
 */
import type { FastifyInstance } from 'fastify';
import { API_VERSION, isJsonObject as isObject, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import {
  changeRunningWorkflow,
  resubmitWorkflow,
  resumeRunningWorkflow,
  retryFailedWorkflow,
  setSuspendedNode,
  type SpecOperation,
} from '../../operations/index.js';
import { badRequest } from '../errors.js';
import { creatorOf } from './userinfo.js';
import { subjectOf, validateForCreate } from '../workflow-validation.js';

interface NameParams {
  namespace: string;
  name: string;
}

const SPEC_OPERATIONS: SpecOperation[] = ['stop', 'terminate', 'suspend'];

/** `["a=b", …]` (the peer's form) → {a: "b"}; the field named in the error. */
function parameterList(v: unknown, field: string): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badRequest(`${field} must be a list of "name=value" strings`);
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [i, p] of v.entries()) {
    const eq = typeof p === 'string' ? p.indexOf('=') : -1;
    if (eq <= 0) throw badRequest(`${field}[${i}] must be "name=value", got ${JSON.stringify(p)}`);
    out[(p as string).slice(0, eq)] = (p as string).slice(eq + 1);
  }
  return out;
}

/** The node a resume or set names: "displayName=X" or "name=X" (the selectors a suspend node is found by). */
function suspendNodeOf(selector: unknown): string | undefined {
  if (selector === undefined || selector === '') return undefined;
  const m = typeof selector === 'string' ? /^(displayName|name)=(.+)$/.exec(selector) : null;
  if (!m) throw badRequest('nodeFieldSelector must be "displayName=<step>" or "name=<node name>" (other selectors are not supported)');
  return m[2];
}

/** The peer's outputParameters: a JSON object of strings, sent as a string. */
function outputParametersOf(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  let parsed: unknown;
  try {
    parsed = typeof v === 'string' ? JSON.parse(v) : v;
  } catch {
    throw badRequest('outputParameters must be a JSON object of strings, e.g. {"approve": "yes"}');
  }
  if (!isObject(parsed)) throw badRequest('outputParameters must be a JSON object of strings');
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, val] of Object.entries(parsed)) {
    if (typeof val !== 'string') throw badRequest(`outputParameters.${k} must be a string`);
    out[k] = val;
  }
  return out;
}

function bodyOf(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (!isObject(body)) throw badRequest('the request body must be a JSON object');
  return body;
}

/** Registered inside workflowRoutes, so its onRequest hook (caller, namespace allow-list) applies. */
export function workflowOperationRoutes(app: FastifyInstance, kube: KubeClient): void {
  for (const op of SPEC_OPERATIONS) {
    app.put<{ Params: NameParams }>(`/api/v1/workflows/:namespace/:name/${op}`, async (req) => {
      bodyOf(req.body);
      return changeRunningWorkflow(kube.as(req.caller.identity), req.params.namespace, req.params.name, op);
    });
  }

  app.put<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name/resume', async (req) => {
    const body = bodyOf(req.body);
    const node = suspendNodeOf(body.nodeFieldSelector);
    const parameters = parameterList(body.parameters, 'parameters');
    const { workflow } = await resumeRunningWorkflow(kube.as(req.caller.identity), req.params.namespace, req.params.name, {
      node,
      parameters,
    });
    return workflow;
  });

  app.put<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name/set', async (req) => {
    const body = bodyOf(req.body);
    for (const f of ['phase', 'message'] as const)
      if (body[f] !== undefined && body[f] !== null && typeof body[f] !== 'string') throw badRequest(`${f} must be a string`);
    const node = suspendNodeOf(body.nodeFieldSelector);
    const outputParameters = outputParametersOf(body.outputParameters);
    return setSuspendedNode(kube.as(req.caller.identity), req.params.namespace, req.params.name, {
      ...(node !== undefined ? { node } : {}),
      ...(typeof body.phase === 'string' && body.phase ? { phase: body.phase } : {}),
      ...(typeof body.message === 'string' && body.message ? { message: body.message } : {}),
      ...(outputParameters ? { outputParameters } : {}),
    });
  });

  app.put<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name/retry', async (req) => {
    const body = bodyOf(req.body);
    if (body.restartSuccessful !== undefined && typeof body.restartSuccessful !== 'boolean')
      throw badRequest('restartSuccessful must be true or false');
    if (body.nodeFieldSelector !== undefined && typeof body.nodeFieldSelector !== 'string')
      throw badRequest('nodeFieldSelector must be a string');
    const { workflow } = await retryFailedWorkflow(kube.as(req.caller.identity), req.params.namespace, req.params.name, {
      restartSuccessful: body.restartSuccessful === true,
      selector: (body.nodeFieldSelector as string | undefined) || undefined,
    });
    return workflow;
  });

  app.put<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name/resubmit', async (req) => {
    const body = bodyOf(req.body);
    if (body.memoized !== undefined && typeof body.memoized !== 'boolean') throw badRequest('memoized must be true or false');
    const parameters = parameterList(body.parameters, 'parameters');
    return resubmitWorkflow(kube.as(req.caller.identity), req.params.namespace, req.params.name, {
      memoized: body.memoized === true,
      parameters,
      creator: await creatorOf(kube, req.caller),
    });
  });

  app.post<{ Params: { namespace: string } }>('/api/v1/workflows/:namespace/lint', async (req) => {
    const body = bodyOf(req.body);
    if (!isObject(body.workflow)) throw badRequest('workflow is required: the body must carry the workflow to lint, {"workflow": {…}}');
    const { namespace } = req.params;
    const given = body.workflow as Partial<Workflow> & { kind?: string };
    if (given.kind !== undefined && given.kind !== 'Workflow')
      throw badRequest(`workflow.kind must be "Workflow", got "${String(given.kind)}"`);
    const wf = {
      ...given,
      apiVersion: API_VERSION,
      kind: 'Workflow',
      metadata: { ...(isObject(given.metadata) ? given.metadata : {}), namespace },
    } as Workflow;
    if (!isObject(given.spec))
      throw badRequest(`${subjectOf(namespace, wf)}: spec is required (the templates and entrypoint of the workflow)`);
    await validateForCreate(kube.as(req.caller.identity), namespace, wf);
    return wf;
  });
}
