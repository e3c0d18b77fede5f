/**
 * Workflow REST: create, list, get, delete in a namespace, each made with the caller's identity
 * (see auth.ts), so the API server's RBAC decides.
 *
 *   POST   /api/v1/workflows/{namespace}          {namespace, serverDryRun, workflow}
 *                                                 (annotated workflows.plugflow.io/creator: the caller's user name)
 *   GET    /api/v1/workflows/{namespace}          ?listOptions.labelSelector=…&listOptions.fieldSelector=…
 *                                                 &listOptions.limit=…&listOptions.continue=…
 *   GET    /api/v1/workflows/                      the same across every namespace the caller may list
 *   GET    /api/v1/workflows/{namespace}/{name}
 *   DELETE /api/v1/workflows/{namespace}/{name}   → {}
 *   PUT    /api/v1/workflows/{namespace}/{name}/{stop|terminate|suspend|resume|resubmit}  (workflow-operations.ts)
 *   /api/v1/workflow-templates/{namespace}[/{name}], /api/v1/cluster-workflow-templates[/{name}]  (templates.ts)
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  API_VERSION,
  DEFAULT_INSTALL_NAMESPACE,
  inflateWorkflow,
  isJsonObject as isObject,
  offloadedVersion,
  type Workflow,
} from '../../api/index.js';
import { LargeReads } from '../large-reads.js';
import { sendWithStreamedNodes } from '../stream/nodes-reply.js';
import { NodeStatusCache } from '../node-status-cache.js';
import { CREATE_WORKFLOW_ACCESS, type Authenticator, type Caller } from '../auth.js';
import { badRequest } from '../errors.js';
import { NAMESPACE_NAME } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { WORKFLOWS } from '../../kube/resource.js';
import { workflowShapeProblems, workflowShapeValidator } from '../../api/index.js';
import { listProblems, subjectOf, validateForCreate } from '../workflow-validation.js';
import { templateRoutes } from './templates.js';
import { cronWorkflowRoutes } from './cron-workflows.js';
import { artifactRoutes } from './artifacts.js';
import { workflowOperationRoutes } from './workflow-operations.js';
import { workflowSubmitRoutes } from './workflow-submit.js';
import { serverInfoRoutes } from './server-info.js';
import { syncLimitRoutes } from './sync-limits.js';
import { workflowEventRoutes } from './workflow-events.js';
import { podLogRoutes } from './pod-logs.js';
import { objectEventRoutes } from './object-events.js';
import { eventBindingRoutes } from './event-bindings.js';
import { executorPluginRoutes } from './executor-plugins.js';
import { accessRoutes } from './access.js';
import { archivedWorkflowRoutes } from './archived-workflows.js';
import type { ArchiveStore } from '../../archive/archive-store.js';
import { creatorOf, userInfoRoutes } from './userinfo.js';
import { withCreator } from '../../operations/index.js';
import { listQuery, type ListQuery } from './list-query.js';
import { summarize, wantsSummary } from '../workflow-summary.js';

/** Routes that create a workflow in the path's namespace (or ask whether a create would pass). */
const CREATE_ROUTES = new Set(['/api/v1/workflows/:namespace', '/api/v1/workflows/:namespace/lint', '/api/v1/workflows/:namespace/submit']);

/** Routes that act on every namespace: refused when the server serves only some (--allowed-namespaces). */
const ALL_NAMESPACES = new Set(['/api/v1/workflows/', '/api/v1/workflow-events/']);

export interface WorkflowRouteDeps {
  kube: KubeClient;
  auth: Authenticator;
  /** Where plugflow is installed: its executor plugins are seen by every namespace. */
  installNamespace?: string;
  /** Stores artifacts may be downloaded from besides the artifact repositories. */
  artifactEndpoints?: string[];
  /** The workflow archive, when the server is given one (`PLUGFLOW_ARCHIVE_URL`). */
  archive?: ArchiveStore;
}

interface NsParams {
  namespace: string;
}
interface NameParams extends NsParams {
  name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts as, set by the onRequest hook before the body is read. */
    caller: Caller;
  }
}

export async function workflowRoutes(app: FastifyInstance, deps: WorkflowRouteDeps): Promise<void> {
  const { kube, auth } = deps;
  // Nodes of workflows too large for their object are read from the archive's database, each
  // whole read in a large-read slot (large-reads.ts); the watch keeps the last few it read.
  const largeReads = new LargeReads();
  const offloaded = deps.archive?.nodeStatus();
  const nodes = offloaded
    ? new NodeStatusCache({ load: (uid, version) => largeReads.run(`workflow ${uid}`, () => offloaded.load(uid, version)) })
    : undefined;
  workflowShapeValidator(); // compiled now, at start-up, rather than on the first create

  // Authentication, the namespace allow-list and what can be authorized without the body (may
  // this token create workflows here?) run in onRequest, before fastify reads a byte of the
  // body: an unauthenticated or unauthorized caller costs no parsing, shape check or validation.
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (req) => {
    req.caller = auth.callerOf(req.headers.authorization, req.socket.remoteAddress);
    const { namespace } = req.params as Partial<NsParams>;
    if (!namespace) {
      // An empty namespace segment (`/api/v1/workflow-event-bindings//`) reaches the API server
      // as a list across every namespace: refused like the all-namespace routes.
      if (namespace === '' || ALL_NAMESPACES.has(req.routeOptions.url ?? '')) auth.checkAllNamespaces();
      return;
    }
    if (!NAMESPACE_NAME.test(namespace)) throw badRequest(`"${namespace.slice(0, 80)}" is not a valid namespace name`);
    auth.checkNamespace(namespace);
    // Creating workflows (and linting one, which is asking whether a create would pass); the
    // template routes and operations leave it to the API server's answer to the call itself.
    const creates = CREATE_ROUTES.has(req.routeOptions.url ?? '');
    if (req.method === 'POST' && creates) await auth.require(req.caller, namespace, CREATE_WORKFLOW_ACCESS);
  });

  app.post<{ Params: NsParams; Body: unknown }>('/api/v1/workflows/:namespace', async (req) => {
    const { caller } = req;
    const { namespace } = req.params;
    const body = req.body;
    if (!isObject(body)) throw badRequest('the request body must be a JSON object: {"namespace": …, "serverDryRun": …, "workflow": {…}}');
    if (body.namespace !== undefined && typeof body.namespace !== 'string')
      throw badRequest('namespace in the body must be a string (the namespace of the path)');
    if (body.namespace !== undefined && body.namespace !== '' && body.namespace !== namespace) {
      throw badRequest(`namespace "${body.namespace}" in the body differs from "${namespace}" in the path`);
    }
    if (body.workflow === undefined || body.workflow === null)
      throw badRequest('workflow is required: the body must carry the workflow to create');
    if (!isObject(body.workflow)) throw badRequest('workflow must be an object (a Workflow with metadata and spec)');
    const raw = body.workflow;
    if (raw.metadata !== undefined && !isObject(raw.metadata)) throw badRequest('workflow.metadata must be an object');
    if (!isObject(raw.spec)) throw badRequest('workflow.spec is required: the templates and entrypoint of the workflow');
    // The shape first: nothing below (nor the engine's validator) reads a field before its type is known.
    const problems = workflowShapeProblems(raw);
    if (problems.length > 0) throw badRequest(`${subjectOf(namespace, raw)} is invalid: ${listProblems(problems.map((p) => p.message))}`);
    const given = raw as Partial<Workflow> & { kind?: string };
    if (given.kind !== undefined && given.kind !== 'Workflow') throw badRequest(`workflow.kind must be "Workflow", got "${given.kind}"`);
    const metadata = { ...(given.metadata ?? {}) };
    if (metadata.namespace && metadata.namespace !== namespace) {
      throw badRequest(`workflow.metadata.namespace "${metadata.namespace}" differs from "${namespace}" in the path`);
    }
    if (!metadata.name && !metadata.generateName) throw badRequest('workflow.metadata.name or workflow.metadata.generateName is required');
    const wf: Workflow = { ...(given as Workflow), apiVersion: API_VERSION, kind: 'Workflow', metadata: { ...metadata, namespace } };
    delete wf.status;
    const asCaller = kube.as(caller.identity);
    await validateForCreate(asCaller, namespace, wf);
    // Who submitted it, as the API server sees the token (never what the client wrote).
    wf.metadata = withCreator(wf.metadata, await creatorOf(kube, caller));
    const dryRun = body.serverDryRun === true || dryRunAll(body.createOptions);
    return asCaller.create<Workflow>(WORKFLOWS, namespace, wf, { dryRun });
  });

  const list = async (req: FastifyRequest<{ Params: Partial<NsParams>; Querystring: ListQuery }>) => {
    const o = listQuery(req.query);
    const found = await kube.as(req.caller.identity).list<Workflow>(WORKFLOWS, { ...o, namespace: req.params.namespace || undefined });
    // Clients see nodes, never the compressed form they are stored in (compressed-nodes.ts).
    const shape: (wf: Workflow) => unknown = wantsSummary(req.query) ? summarize : (wf) => inflateWorkflow(wf);
    return { ...found, items: found.items.map(shape) };
  };
  app.get('/api/v1/workflows/:namespace', list);
  // Every namespace the caller may list (the peer's empty namespace).
  app.get('/api/v1/workflows/', list);

  app.get<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name', async (req, reply) => {
    const wf = inflateWorkflow(await kube.as(req.caller.identity).get<Workflow>(WORKFLOWS, req.params.namespace, req.params.name));
    const version = offloadedVersion(wf.status);
    const uid = wf.metadata?.uid;
    if (version === undefined || !uid || !offloaded) return wf;
    // Its nodes are in the database: streamed from there page by page (nodes-reply.ts).
    await largeReads.run(`workflow ${req.params.namespace}/${req.params.name}`, () =>
      sendWithStreamedNodes(reply, wf, offloaded.nodePages(uid, version)),
    );
  });

  app.delete<{ Params: NameParams }>('/api/v1/workflows/:namespace/:name', async (req) => {
    const { caller } = req;
    await kube.as(caller.identity).delete(WORKFLOWS, req.params.namespace, req.params.name);
    return {};
  });

  workflowOperationRoutes(app, kube);
  workflowSubmitRoutes(app, kube);
  serverInfoRoutes(app);
  syncLimitRoutes(app, kube);
  templateRoutes(app, kube);
  cronWorkflowRoutes(app, kube);
  const trust = {
    installNamespace: deps.installNamespace ?? DEFAULT_INSTALL_NAMESPACE,
    ownClient: kube,
    ...(deps.artifactEndpoints ? { endpoints: deps.artifactEndpoints } : {}),
  };
  artifactRoutes(app, kube, trust);
  workflowEventRoutes(app, kube, nodes);
  podLogRoutes(app, kube);
  objectEventRoutes(app, kube);
  eventBindingRoutes(app, kube);
  executorPluginRoutes(app, kube, deps.installNamespace ?? DEFAULT_INSTALL_NAMESPACE);
  accessRoutes(app, auth);
  userInfoRoutes(app, kube);
  if (deps.archive) archivedWorkflowRoutes(app, { kube, auth, store: deps.archive, trust, largeReads });
}

/** `createOptions.dryRun: ["All"]`, the Kubernetes form the peer's clients also send. */
function dryRunAll(createOptions: unknown): boolean {
  if (!isObject(createOptions)) return false;
  const d = createOptions.dryRun;
  return Array.isArray(d) ? d.includes('All') : d === 'All';
}
