/**
 * Kubernetes Events about a workflow or one of its pods, with the caller's rights (the caller
 * needs `list` on events):
 *
 *   GET /api/v1/workflows/{namespace}/{name}/events            the workflow's own Events
 *   GET /api/v1/workflows/{namespace}/{name}/events?podName=…  the Events of one of its pods
 *
 * → {items: [{type, reason, message, count, firstTimestamp, lastTimestamp, source}]}, oldest
 * first as far as their timestamps tell: the API server keeps whole seconds, and events of one
 * second stay in the order it lists them. A pod must carry the workflow's label, as for its logs.
 *
 *   GET /api/v1/stream/events/{namespace}?listOptions.fieldSelector=…&listOptions.labelSelector=…
 *
 * The peer's watch of a namespace's Events (its UI's Events panel): server-sent events, each
 * `{"result": <Event>}` — the Events there when it starts, then each one added or changed, until
 * the caller goes away (the caller needs `list` and `watch` on events).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SseStream } from '../stream/sse.js';
import { relayWatch } from '../stream/watch-relay.js';
import { listQuery, type ListQuery } from './list-query.js';
import type { KubeClient } from '../../kube/client.js';
import { requireWorkflowPod } from './workflow-pod.js';
import { EVENTS } from '../../kube/resource.js';

type Req = FastifyRequest<{ Params: { namespace: string; name: string }; Querystring: { podName?: string } }>;

interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string };
  involvedObject?: { kind?: string };
}

export function objectEventRoutes(app: FastifyInstance, kube: KubeClient): void {
  app.get('/api/v1/workflows/:namespace/:name/events', async (req: Req) => {
    const { namespace, name } = req.params;
    const podName = req.query.podName;
    const asCaller = kube.as(req.caller.identity);
    if (podName) await requireWorkflowPod(asCaller, namespace, name, podName);
    const kind = podName ? 'Pod' : 'Workflow';
    const list = await asCaller.list<KubeEvent>(EVENTS, { namespace, fieldSelector: `involvedObject.name=${podName ?? name}` });
    const when = (e: KubeEvent) => e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '';
    const items = list.items
      .filter((e) => e.involvedObject?.kind === kind)
      .sort((a, b) => when(a).localeCompare(when(b)))
      .map((e) => ({
        type: e.type,
        reason: e.reason,
        message: e.message,
        count: e.count ?? 1,
        firstTimestamp: e.firstTimestamp ?? e.eventTime,
        lastTimestamp: when(e),
        source: e.source?.component,
      }));
    return { items };
  });
  app.get('/api/v1/stream/events/:namespace', (req: FastifyRequest<{ Params: { namespace: string }; Querystring: ListQuery }>, reply) =>
    watchEvents(kube, req, reply),
  );
}

async function watchEvents(
  kube: KubeClient,
  req: FastifyRequest<{ Params: { namespace: string }; Querystring: ListQuery }>,
  reply: FastifyReply,
): Promise<void> {
  const asCaller = kube.as(req.caller.identity);
  const { namespace } = req.params;
  const q = listQuery(req.query);
  const selectors = { namespace, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector };
  // Listed before the stream starts: a refusal is an ordinary error reply.
  const list = await asCaller.list<KubeEvent>(EVENTS, selectors);
  const sse = new SseStream(req, reply);
  for (const e of list.items) sse.send(e);
  await relayWatch({
    client: asCaller,
    type: EVENTS,
    query: selectors,
    version: list.metadata?.resourceVersion,
    sse,
    what: 'events',
    prepare: (type, object) => (type === 'ADDED' || type === 'MODIFIED' ? object : undefined),
  });
}
