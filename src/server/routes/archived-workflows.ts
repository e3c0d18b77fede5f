/**
 * The workflow archive (src/archive), read with the caller's rights: a namespace's archived
 * workflows are shown to whoever may list its live ones, one is read by whoever may get it, and
 * deleted by whoever may delete it (SelfSubjectAccessReviews, cached like every review; in server
 * auth mode the allow-list of namespaces applies).
 *
 *   GET    /api/v1/archived-workflows?namespace=&phase=A,B&listOptions.labelSelector=&listOptions.limit=&listOptions.continue=&count=true
 *          → {items: [summary], metadata: {continue?, count?}}; without namespace: every namespace
 *          (the caller may list workflows cluster-wide)
 *   GET    /api/v1/archived-workflows-label-keys?namespace=                          → {items: [key]}
 *   GET    /api/v1/archived-workflows-label-values?listOptions.labelSelector=KEY&namespace=  → {items: [value]}
 *   GET    /api/v1/archived-workflows/{uid}            → the Workflow as it finished, nodes included
 *   DELETE /api/v1/archived-workflows/{uid}            → {}
 *   PUT    /api/v1/archived-workflows/{uid}/resubmit   body {parameters?: ["name=value"]} → the new Workflow
 *   PUT    /api/v1/archived-workflows/{uid}/retry      body {restartSuccessful?, nodeFieldSelector?} → the Workflow
 *          created again under its name, its failed steps to run again (needs create on workflows
 *          and patch on workflows, update on workflows/status in its namespace)
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PLURAL, type Workflow } from '../../api/index.js';
import { ArchiveQueryError } from '../../archive/archive-query.js';
import type { ArchiveStore, ArchivedSummary } from '../../archive/archive-store.js';
import type { KubeClient } from '../../kube/client.js';
import { errorMessage } from '../../log/error-message.js';
import { resubmitFrom, retryArchivedWorkflow, type ArtifactTrust } from '../../operations/index.js';
import type { Access, Authenticator, Caller } from '../auth.js';
import { badRequest, Code, HttpError, notFound, unavailable } from '../errors.js';
import { listQuery, type ListQuery } from './list-query.js';
import { archivedArtifactRoutes } from './archived-artifacts.js';
import { creatorOf } from './userinfo.js';
import { LARGE_READ_NODES, type LargeReads } from '../large-reads.js';
import { sendWithStreamedNodes } from '../stream/nodes-reply.js';

const access = (verb: string, purpose: string): Access => ({ verb, resource: PLURAL.workflow, purpose });
const LIST = access('list', 'so it may not list its archived workflows');
const GET = access('get', 'so it may not read its archived workflows');
const DELETE = access('delete', 'so it may not delete its archived workflows');
/** Retrying creates the workflow again and writes its status: asked before either happens. */
const RETRY: Access[] = [
  access('create', 'so it may not retry its archived workflows'),
  access('patch', 'so it may not retry its archived workflows'),
  { verb: 'update', resource: PLURAL.workflow, subresource: 'status', purpose: 'so it may not retry its archived workflows' },
];

type ListReq = FastifyRequest<{ Querystring: ListQuery & { namespace?: string; phase?: string; count?: string } }>;
type UidReq = FastifyRequest<{ Params: { uid: string }; Body: unknown }>;

export function archivedWorkflowRoutes(
  app: FastifyInstance,
  deps: { kube: KubeClient; auth: Authenticator; store: ArchiveStore; trust: ArtifactTrust; largeReads: LargeReads },
): void {
  const { kube, auth, store, largeReads } = deps;
  const allowed = async (caller: Caller, namespace: string, need: Access) => {
    const refusal = await auth.access(caller, namespace, need);
    if (refusal) throw refusal;
  };
  /**
   * The archived workflow's namespace, once the caller may get workflows there. A uid in a
   * namespace the caller may not read is answered like one that is not archived (404), so the
   * answer does not tell which namespace a uid belongs to.
   */
  const readable = async (caller: Caller, uid: string): Promise<string> => (await located(caller, uid)).namespace;
  const located = async (caller: Caller, uid: string): Promise<{ namespace: string; nodeCount: number }> => {
    const where = await reading(() => store.locate(uid));
    const refusal = where === undefined ? undefined : await auth.access(caller, where.namespace, GET);
    if (where === undefined || refusal?.code === Code.PermissionDenied) throw notFound(`no archived workflow with uid ${uid}`);
    if (refusal) throw refusal;
    return where;
  };
  /** The whole archived workflow, in a large-read slot when it has many nodes. */
  const whole = async (caller: Caller, uid: string): Promise<{ namespace: string; workflow: Workflow | undefined }> => {
    const { namespace, nodeCount } = await located(caller, uid);
    const read = () => reading(() => store.get(uid));
    return { namespace, workflow: nodeCount > LARGE_READ_NODES ? await largeReads.run(`archived workflow ${uid}`, read) : await read() };
  };

  app.get('/api/v1/archived-workflows', async (req: ListReq) => {
    const q = req.query;
    const namespace = one(q.namespace);
    const o = listQuery(q);
    if (o.fieldSelector)
      throw badRequest('listOptions.fieldSelector is not supported by the archive: use namespace=, phase= and listOptions.labelSelector');
    if (o.resourceVersion)
      throw badRequest('listOptions.resourceVersion is not supported by the archive: archived workflows do not change');
    // '' asks for the right in every namespace (a cluster-wide list), as the live list does.
    await allowed(req.caller, namespace ?? '', LIST);
    const filter = {
      ...(namespace ? { namespaces: [namespace] } : {}),
      ...(one(q.phase)
        ? {
            phases: one(q.phase)!
              .split(',')
              .map((p) => p.trim()),
          }
        : {}),
      ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
    };
    const page = await reading(() => store.list(filter, { limit: o.limit ?? 100, ...(o.continue ? { cursor: o.continue } : {}) }));
    const count = one(q.count) === 'true' ? await reading(() => store.count(filter)) : undefined;
    return {
      items: page.items.map(asWorkflowItem),
      metadata: { ...(page.continue ? { continue: page.continue } : {}), ...(count !== undefined ? { count } : {}) },
    };
  });

  // The label keys, and one key's values, of the archived workflows the caller may list (the
  // peer's `argo archive list-label-keys` / `list-label-values -l key`).
  app.get('/api/v1/archived-workflows-label-keys', async (req: ListReq) => {
    const namespace = one(req.query.namespace);
    await allowed(req.caller, namespace ?? '', LIST);
    return { items: await reading(() => store.labelKeys(namespace ? [namespace] : undefined)) };
  });
  app.get('/api/v1/archived-workflows-label-values', async (req: ListReq) => {
    const namespace = one(req.query.namespace);
    const key = listQuery(req.query).labelSelector;
    if (!key) throw badRequest('listOptions.labelSelector is required: the label key whose values to list');
    await allowed(req.caller, namespace ?? '', LIST);
    return { items: await reading(() => store.labelValues(key, namespace ? [namespace] : undefined)) };
  });

  // Streamed: the nodes go out page by page as the caller takes them (nodes-reply.ts).
  app.get('/api/v1/archived-workflows/:uid', async (req: UidReq, reply) => {
    const { uid } = req.params;
    const { nodeCount } = await located(req.caller, uid);
    const send = async () => {
      const head = await reading(() => store.head(uid));
      if (!head) throw notFound(`no archived workflow with uid ${uid}`);
      await reading(() => sendWithStreamedNodes(reply, head, store.nodePages(uid)));
    };
    await (nodeCount > LARGE_READ_NODES ? largeReads.run(`archived workflow ${uid}`, send) : send());
  });

  app.delete('/api/v1/archived-workflows/:uid', async (req: UidReq) => {
    await allowed(req.caller, await readable(req.caller, req.params.uid), DELETE);
    await reading(() => store.delete(req.params.uid));
    return {};
  });

  app.put('/api/v1/archived-workflows/:uid/resubmit', async (req: UidReq) => {
    const { workflow: wf } = await whole(req.caller, req.params.uid);
    if (!wf) throw notFound(`no archived workflow with uid ${req.params.uid}`);
    const body = (req.body ?? {}) as { parameters?: unknown };
    const parameters = parameterMap(body.parameters);
    // Created with the caller's own token: the API server decides whether they may create it there.
    return resubmitFrom(kube.as(req.caller.identity), wf as Workflow, { parameters, creator: await creatorOf(kube, req.caller) });
  });

  app.put('/api/v1/archived-workflows/:uid/retry', async (req: UidReq) => {
    const ns = await readable(req.caller, req.params.uid);
    for (const need of RETRY) await allowed(req.caller, ns, need);
    const { workflow: wf } = await whole(req.caller, req.params.uid);
    if (!wf) throw notFound(`no archived workflow with uid ${req.params.uid}`);
    const body = (req.body ?? {}) as { restartSuccessful?: unknown; nodeFieldSelector?: unknown };
    if (body.restartSuccessful !== undefined && typeof body.restartSuccessful !== 'boolean')
      throw badRequest('restartSuccessful must be true or false');
    if (body.nodeFieldSelector !== undefined && typeof body.nodeFieldSelector !== 'string')
      throw badRequest('nodeFieldSelector must be a string');
    const { workflow } = await retryArchivedWorkflow(kube.as(req.caller.identity), wf, {
      restartSuccessful: body.restartSuccessful === true,
      selector: body.nodeFieldSelector || undefined,
      creator: await creatorOf(kube, req.caller),
    });
    return workflow;
  });

  archivedArtifactRoutes(app, {
    kube,
    trust: deps.trust,
    archived: async (caller, uid, namespace) => {
      const found = await whole(caller, uid);
      const wf = found.namespace === namespace || namespace === undefined ? found.workflow : undefined;
      if (!wf) throw notFound(`no archived workflow with uid ${uid}${namespace ? ` in namespace ${namespace}` : ''}`);
      return wf;
    },
  });
}

function one(v: string | string[] | undefined): string | undefined {
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return last === '' ? undefined : last;
}

function parameterMap(v: unknown): Record<string, string> {
  if (v === undefined) return {};
  if (!Array.isArray(v) || !v.every((p) => typeof p === 'string' && p.includes('=')))
    throw badRequest('parameters must be a list of "name=value" strings');
  return Object.fromEntries((v as string[]).map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
}

/** A refused query is the caller's 400; a database that does not answer is 503, named. */
async function reading<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if (err instanceof ArchiveQueryError) throw badRequest(err.message);
    throw unavailable(`the workflow archive cannot be read: ${errorMessage(err)}`, 5);
  }
}

/**
 * A list item: the summary's fields, and the same facts in a Workflow's places (metadata, status),
 * which is where the peer's clients read them (`argo archive list` decodes a WorkflowList).
 */
function asWorkflowItem(a: ArchivedSummary): ArchivedSummary & { metadata: Record<string, unknown>; status: Record<string, unknown> } {
  return {
    ...a,
    metadata: {
      name: a.name,
      namespace: a.namespace,
      uid: a.uid,
      labels: a.labels,
      ...(a.startedAt ? { creationTimestamp: a.startedAt } : {}),
    },
    status: {
      phase: a.phase,
      ...(a.startedAt ? { startedAt: a.startedAt } : {}),
      finishedAt: a.finishedAt,
      ...(a.message ? { message: a.message } : {}),
      ...(a.progress ? { progress: a.progress } : {}),
    },
  };
}
