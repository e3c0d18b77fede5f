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
import { ApiError } from '../../kube/errors.js';
import type { WatchEvent } from '../../kube/request-options.js';
import { WORKFLOWS } from '../../kube/resource.js';
import { errorMessage } from '../../log/error-message.js';
import { SseStream } from '../stream/sse.js';
import { summarize, wantsSummary } from '../workflow-summary.js';
import { listQuery, type ListQuery } from './list-query.js';

type Req = FastifyRequest<{ Params: { namespace?: string }; Querystring: ListQuery }>;

/** How long one watch of the API server lasts before the stream re-watches (it picks up where it was). */
const WATCH_SECONDS = 300;

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
  let version = list.metadata?.resourceVersion;
  sse.event('synced', { resourceVersion: version });
  while (sse.open) {
    let failure: { code: number; message: string } | undefined;
    // Events are sent in order even when shaping one waits for the database.
    let sent = Promise.resolve();
    const onEvent = (e: WatchEvent) => {
      if (e.type === 'ERROR') {
        const status = e.object as { code?: number; message?: string };
        failure = { code: status.code ?? 500, message: status.message ?? 'the watch failed' };
        return;
      }
      const rv = (e.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
      if (rv) version = rv;
      if (e.type === 'BOOKMARK') return;
      const type = e.type;
      const shaped = shape(e.object as unknown as Workflow);
      sent = sent.then(async () => {
        sse.send({ type, object: await shaped });
      });
    };
    try {
      await asCaller.watch(
        WORKFLOWS,
        {
          namespace,
          labelSelector: q.labelSelector,
          fieldSelector: q.fieldSelector,
          resourceVersion: version,
          timeoutSeconds: WATCH_SECONDS,
          allowWatchBookmarks: true,
        },
        onEvent,
        sse.signal,
      );
      await sent;
    } catch (err) {
      const code = err instanceof ApiError && err.code !== 0 ? err.code : 503;
      if (sse.open) sse.fail(code, `watching workflows: ${errorMessage(err)}`);
      return;
    }
    // An ERROR event ends the stream (re-watching at once could spin): 410 says the version expired.
    if (failure?.code === 410) sse.fail(410, 'the watch fell too far behind the API server (410 Gone): reconnect to list again');
    else if (failure) sse.fail(failure.code, `watching workflows: ${failure.message}`);
  }
}
