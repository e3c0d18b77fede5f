/**
 * The log of one container of a workflow's pod, with the caller's rights (the peer's path):
 *
 *   GET /api/v1/workflows/{namespace}/{name}/log?podName=…&logOptions.container=main
 *       &logOptions.follow=true&logOptions.tailLines=…
 *
 * Server-sent events, one message per line: `{"result": {"content": "<line>", "podName": "…"}}`.
 * With follow the stream lasts until the container ends (or the caller goes away). The pod is
 * read first and must carry the workflow's label: the endpoint shows the logs of that workflow's
 * pods, not of any pod of the namespace. A refusal (no such pod, container not started yet) is an
 * ordinary error reply naming it; the caller needs `get` on pods and pods/log.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KubeClient } from '../../kube/client.js';
import { requireWorkflowPod } from './workflow-pod.js';
import { errorMessage } from '../../log/error-message.js';
import { badRequest } from '../errors.js';
import { SseStream } from '../stream/sse.js';
import { LogLines } from '../stream/log-lines.js';

type Req = FastifyRequest<{ Params: { namespace: string; name: string }; Querystring: Record<string, string | undefined> }>;

export function podLogRoutes(app: FastifyInstance, kube: KubeClient): void {
  app.get('/api/v1/workflows/:namespace/:name/log', async (req: Req, reply) => {
    const { namespace, name } = req.params;
    const podName = req.query.podName;
    if (!podName) throw badRequest("podName is required: the pod of the node whose log to show (the node's status.nodes[…].podName)");
    const container = req.query['logOptions.container'] || 'main';
    const follow = req.query['logOptions.follow'] === 'true';
    const tail = req.query['logOptions.tailLines'];
    if (tail !== undefined && !/^\d+$/.test(tail)) throw badRequest(`logOptions.tailLines must be a whole number, got "${tail}"`);
    const asCaller = kube.as(req.caller.identity);
    await requireWorkflowPod(asCaller, namespace, name, podName);
    const abort = new AbortController();
    const chunks = await asCaller.podLog(
      namespace,
      podName,
      { container, follow, tailLines: tail ? Number(tail) : undefined },
      abort.signal,
    );
    const sse = new SseStream(req, reply);
    sse.signal.addEventListener('abort', () => abort.abort());
    await sendLines(sse, chunks, podName, `${podName}/${container}`);
  });
}

/**
 * Sends a log's bytes as one message per line (`{content, podName}`), then ends the stream; a line
 * longer than 64 KiB goes in pieces, one longer than 1 MiB is cut with a note (`LogLines`), and
 * each chunk waits for the caller to take what was sent, so neither a log without newlines nor a
 * slow reader grows the server's memory. A read that fails ends it with a 503 naming `what`.
 */
export async function sendLines(sse: SseStream, chunks: AsyncIterable<Buffer>, podName: string, what: string): Promise<void> {
  const lines = new LogLines();
  try {
    for await (const chunk of chunks) {
      if (!sse.open) return;
      for (const content of lines.push(chunk)) sse.send({ content, podName });
      await sse.drained();
    }
    for (const content of lines.end()) sse.send({ content, podName });
    sse.end();
  } catch (err) {
    if (sse.open) sse.fail(503, `reading the log of ${what}: ${errorMessage(err)}`);
  }
}
