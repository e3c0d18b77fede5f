/**
 * Workflow changes as a stream, with the caller's rights (the peer's path):
 *
 *   GET /api/v1/workflow-events/{namespace}   ?listOptions.labelSelector=…&listOptions.fieldSelector=…&summary=true
 *   GET /api/v1/workflow-events/              every namespace the caller may list
 *
 * Server-sent events: first every workflow that exists, each as `{"result": {"type": "ADDED",
 * "object": …}}`, then `event: synced` (the list is complete: a view can stop showing "loading"),
 * then each change (ADDED, MODIFIED, DELETED) as it happens. The list is made
 * with the caller's token before the stream starts, so a refusal is an ordinary 401/403 reply;
 * the watch continues from that list's resourceVersion, so no change between the two is lost.
 * When the API server ends a watch (its timeout) the stream re-watches from the last version
 * seen; when that version has expired (410) the stream ends with `event: error` code 410, and a
 * client lists again by reconnecting. `summary=true` sends workflow-summary.ts's summaries.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { inflateWorkflow, readableWorkflow, type NodeStatusReader, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { WORKFLOWS } from '../../kube/resource.js';
import { SseStream } from '../stream/sse.js';
import { relayWatch } from '../stream/watch-relay.js';
import { summarize, wantsSummary } from '../workflow-summary.js';
import { listQuery, type ListQuery } from './list-query.js';

type Req = FastifyRequest<{ Params: { namespace?: string }; Querystring: ListQuery }>;

export function workflowEventRoutes(app: FastifyInstance, kube: KubeClient, nodes?: NodeStatusReader): void {
  const handler = (req: Req, reply: FastifyReply) => stream(kube, req, reply, nodes);
  app.get('/api/v1/workflow-events/:namespace', handler);
  app.get('/api/v1/workflow-events/', handler);
}

async function stream(kube: KubeClient, req: Req, reply: FastifyReply, nodes: NodeStatusReader | undefined): Promise<void> {
  const asCaller = kube.as(req.caller.identity);
  const namespace = req.params.namespace || undefined;
  const q = listQuery(req.query);
  // Whole workflows carry their nodes, read from the database when offloaded (a failed read sends
  // the object's summary, which says it is one through status.offloadNodeStatusVersion).
  const shape = wantsSummary(req.query)
    ? async (wf: Workflow) => summarize(wf)
    : (wf: Workflow) => readableWorkflow(wf, nodes).catch(() => inflateWorkflow(wf));
  // Listed before the stream starts: a refusal is an ordinary error reply.
  const list = await asCaller.list<Workflow>(WORKFLOWS, { namespace, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
  const sse = new SseStream(req, reply);
  for (const wf of list.items) sse.send({ type: 'ADDED', object: await shape(wf) });
  const version = list.metadata?.resourceVersion;
  sse.event('synced', { resourceVersion: version });
  await relayWatch({
    client: asCaller,
    type: WORKFLOWS,
    query: { namespace, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector },
    version,
    sse,
    what: 'workflows',
    prepare: async (type, object) => ({ type, object: await shape(object as Workflow) }),
  });
}
