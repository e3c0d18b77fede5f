/**
 * The logs of a workflow's pods, with the caller's rights (the peer's paths):
 *
 *   GET /api/v1/workflows/{namespace}/{name}/log?podName=…&logOptions.container=main
 *       &logOptions.follow=true&logOptions.tailLines=…&grep=…
 *   GET /api/v1/workflows/{namespace}/{name}/{podName}/log?…   (the same, the pod in the path)
 *
 * Server-sent events, one message per line: `{"result": {"content": "<line>", "podName": "…"}}`.
 * With a pod, that pod's container; without one, every pod of the workflow (`argo logs WF`), one
 * after the other in the order they were created — with follow, all at once, and pods created
 * later join until the workflow has finished and every stream ended. `grep` keeps the lines that
 * contain it (plain text, not a regular expression: a pattern from a caller never runs in the
 * server). With follow a stream lasts until its container ends (or the caller goes away). A pod
 * must carry the workflow's label: the endpoint shows the logs of that workflow's pods, not of
 * any pod of the namespace. A refusal (no such pod, container not started yet) is an ordinary
 * error reply naming it; the caller needs `get` on pods and pods/log (and `list` on pods
 * without a pod name).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FINAL_WORKFLOW_PHASES, LABEL_WORKFLOW, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { PODS, WORKFLOWS } from '../../kube/resource.js';
import { requireWorkflowPod } from './workflow-pod.js';
import { errorMessage } from '../../log/error-message.js';
import { badRequest } from '../errors.js';
import { SseStream } from '../stream/sse.js';
import { LogLines } from '../stream/log-lines.js';

type Req = FastifyRequest<{
  Params: { namespace: string; name: string; podName?: string };
  Querystring: Record<string, string | undefined>;
}>;

/** How often a followed workflow's pods are listed again for new ones. */
const NEW_PODS_EVERY_MS = 2_000;
/** Most pods of one workflow whose logs are followed at once; the others wait for a slot. */
const MAX_FOLLOWED_PODS = 16;

interface LogQuery {
  container: string;
  follow: boolean;
  tailLines?: number;
  grep?: string;
}

function logQuery(q: Record<string, string | undefined>): LogQuery {
  const tail = q['logOptions.tailLines'];
  if (tail !== undefined && tail !== '' && !/^\d+$/.test(tail))
    throw badRequest(`logOptions.tailLines must be a whole number, got "${tail}"`);
  return {
    container: q['logOptions.container'] || 'main',
    follow: q['logOptions.follow'] === 'true',
    ...(tail ? { tailLines: Number(tail) } : {}),
    ...(q.grep ? { grep: q.grep } : {}),
  };
}

export function podLogRoutes(app: FastifyInstance, kube: KubeClient): void {
  const route = async (req: Req, reply: FastifyReply) => {
    const { namespace, name } = req.params;
    const podName = req.params.podName || req.query.podName;
    const o = logQuery(req.query);
    const asCaller = kube.as(req.caller.identity);
    if (podName) {
      await requireWorkflowPod(asCaller, namespace, name, podName);
      const abort = new AbortController();
      const chunks = await asCaller.podLog(
        namespace,
        podName,
        { container: o.container, follow: o.follow, tailLines: o.tailLines },
        abort.signal,
      );
      const sse = new SseStream(req, reply);
      sse.signal.addEventListener('abort', () => abort.abort());
      await sendLines(sse, chunks, podName, `${podName}/${o.container}`, o.grep);
      return;
    }
    // Read before the stream opens: a workflow or pods the caller may not read are its 403/404.
    await asCaller.get<Workflow>(WORKFLOWS, namespace, name);
    const first = await podsOf(asCaller, namespace, name);
    const sse = new SseStream(req, reply);
    await workflowLogs(sse, asCaller, namespace, name, o, first);
  };
  app.get('/api/v1/workflows/:namespace/:name/log', route);
  app.get('/api/v1/workflows/:namespace/:name/:podName/log', route);
}

interface PodRef {
  name: string;
  created: string;
}

async function podsOf(asCaller: KubeClient, namespace: string, workflow: string): Promise<PodRef[]> {
  const list = await asCaller.list<{ metadata?: { name?: string; creationTimestamp?: string } }>(PODS, {
    namespace,
    labelSelector: `${LABEL_WORKFLOW}=${workflow}`,
  });
  return list.items
    .map((p) => ({ name: p.metadata?.name ?? '', created: p.metadata?.creationTimestamp ?? '' }))
    .filter((p) => p.name)
    .sort((a, b) => a.created.localeCompare(b.created) || a.name.localeCompare(b.name));
}

/** Every pod's log of one workflow on one stream; with follow, new pods join until the workflow finished. */
async function workflowLogs(
  sse: SseStream,
  asCaller: KubeClient,
  namespace: string,
  workflow: string,
  o: LogQuery,
  first: PodRef[],
): Promise<void> {
  const one = async (pod: string) => {
    let chunks: AsyncIterable<Buffer>;
    try {
      chunks = await asCaller.podLog(namespace, pod, { container: o.container, follow: o.follow, tailLines: o.tailLines }, sse.signal);
    } catch {
      return; // a pod whose container has not started (or is gone) has no log to show yet
    }
    await pipeLines(sse, chunks, pod, o.grep);
  };
  try {
    if (!o.follow) {
      for (const pod of first) {
        if (!sse.open) return;
        await one(pod.name);
      }
      sse.end();
      return;
    }
    const started = new Set<string>();
    const running = new Set<Promise<void>>();
    const waiting: string[] = [];
    const fill = () => {
      while (running.size < MAX_FOLLOWED_PODS && waiting.length > 0) {
        const p: Promise<void> = one(waiting.shift()!).finally(() => running.delete(p));
        running.add(p);
      }
    };
    for (let round = 0; ; round++) {
      if (!sse.open) return;
      // The phase before the pods: once it is final, the list that follows holds every pod.
      const wf = await asCaller.get<Workflow>(WORKFLOWS, namespace, workflow);
      const finished = FINAL_WORKFLOW_PHASES.includes(wf.status?.phase as never);
      const pods = round === 0 && !finished ? first : await podsOf(asCaller, namespace, workflow);
      for (const pod of pods)
        if (!started.has(pod.name)) {
          started.add(pod.name);
          waiting.push(pod.name);
        }
      fill();
      if (finished && waiting.length === 0) {
        // Every pod is known: what is left is their streams, which end with their containers.
        while (running.size > 0) {
          await Promise.race(running);
          fill();
        }
        sse.end();
        return;
      }
      await Promise.race([new Promise((r) => setTimeout(r, NEW_PODS_EVERY_MS)), ...running]);
    }
  } catch (err) {
    if (sse.open) sse.fail(503, `reading the logs of workflow ${namespace}/${workflow}: ${errorMessage(err)}`);
  }
}

/**
 * Sends a log's bytes as one message per line (`{content, podName}`), then ends the stream; a line
 * longer than 64 KiB goes in pieces, one longer than 1 MiB is cut with a note (`LogLines`), and
 * each chunk waits for the caller to take what was sent, so neither a log without newlines nor a
 * slow reader grows the server's memory. A read that fails ends it with a 503 naming `what`.
 */
export async function sendLines(
  sse: SseStream,
  chunks: AsyncIterable<Buffer>,
  podName: string,
  what: string,
  grep?: string,
): Promise<void> {
  try {
    await pipeLines(sse, chunks, podName, grep);
    sse.end();
  } catch (err) {
    if (sse.open) sse.fail(503, `reading the log of ${what}: ${errorMessage(err)}`);
  }
}

/** One log's lines onto an open stream (it stays open); those without `grep` in them are left out. */
async function pipeLines(sse: SseStream, chunks: AsyncIterable<Buffer>, podName: string, grep?: string): Promise<void> {
  const lines = new LogLines();
  const send = (content: string) => {
    if (grep === undefined || content.includes(grep)) sse.send({ content, podName });
  };
  for await (const chunk of chunks) {
    if (!sse.open) return;
    for (const content of lines.push(chunk)) send(content);
    await sse.drained();
  }
  for (const content of lines.end()) send(content);
}
