/**
 * A workflow reply whose nodes are streamed from the database page by page: the JSON is the
 * same as `JSON.stringify(workflow)` with `status.nodes` filled in, but the server holds one page
 * of nodes at a time and waits for the caller to take each before reading the next. A 100,000-node
 * workflow is about 100 MB of JSON; built whole per request, a few parallel reads exhausted the
 * server.
 *
 * The first page is read before the status line is sent, so a database error is an ordinary
 * error reply; a failure later can only cut the reply, which is then destroyed (the caller sees a
 * broken connection, never a short but well-formed workflow).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Workflow } from '../../api/index.js';

export type NodePages = AsyncIterable<[id: string, json: string][]>;

export async function sendWithStreamedNodes(reply: FastifyReply, workflow: Workflow, pages: NodePages): Promise<void> {
  const it = pages[Symbol.asyncIterator]();
  let page = await it.next();
  const { head, tail } = around(workflow, page.done === true);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  let gone = false;
  const closed = new Promise<void>((resolve) =>
    res.once('close', () => {
      gone = true;
      resolve();
    }),
  );
  const write = async (text: string): Promise<void> => {
    if (gone) throw new Error('the caller went away');
    if (!res.write(text)) await Promise.race([new Promise((r) => res.once('drain', r)), closed]);
  };
  try {
    await write(head);
    let first = true;
    while (!page.done) {
      let chunk = '';
      for (const [id, json] of page.value) {
        chunk += `${first ? '' : ','}${JSON.stringify(id)}:${json}`;
        first = false;
      }
      await write(chunk);
      page = await it.next();
    }
    await write(tail);
    res.end();
  } catch {
    await it.return?.();
    res.destroy();
  }
}

/**
 * The JSON before and after the nodes' members: the workflow with a unique marker in place of
 * `status.nodes`, cut at the marker. Without nodes it is the whole workflow and an empty tail.
 */
export function around(workflow: Workflow, noNodes: boolean): { head: string; tail: string } {
  const { nodes: _nodes, ...status } = workflow.status ?? {};
  if (noNodes) return { head: JSON.stringify({ ...workflow, status }), tail: '' };
  const marker = `nodes-${randomUUID()}`;
  const text = JSON.stringify({ ...workflow, status: { ...status, nodes: marker } });
  const at = text.indexOf(JSON.stringify(marker));
  return { head: `${text.slice(0, at)}{`, tail: `}${text.slice(at + marker.length + 2)}` };
}
