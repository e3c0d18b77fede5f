/**
 * A server-sent-events reply (text/event-stream) on a hijacked fastify reply: the watch of
 * workflows and the logs of a pod stream through it. Browsers read it with `fetch` (EventSource
 * cannot send an Authorization header). Each message is one `data:` line of JSON, the peer's
 * `{"result": …}` form.
 *
 * Three framings, as the peer's server (grpc-gateway) has them and one more:
 * - a client that does not accept `text/event-stream` (curl, Hera, scripts) gets newline-delimited
 *   JSON (`application/json`): one `{"result": …}` per line, an error after the stream started as
 *   `{"error": {code, message}}`;
 * - one that does gets server-sent events framed as the peer's, which its CLI reads (it parses
 *   every line longer than `data: ` as a data line, so no other line may be): data lines only, an
 *   error as `data: {"error": {code, message}}`, no named events;
 * - plugflow's UI asks with the request header `x-plugflow-stream: v1` for named events besides:
 *   `event: synced` once a watch's first list is complete, and `event: error`.
 *
 * A bare comment line (`:`) every 15 s keeps proxies and load balancers from closing an idle
 * event stream and lets the server notice a browser that went away (the write fails); it is short
 * enough for the peer's CLI to skip. Newline-delimited JSON has no comments: it gets none.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export const HEARTBEAT_MS = 15_000;
/** The request header (value `v1`) by which a client asks for named events (`synced`, `error`). */
export const NAMED_EVENTS_HEADER = 'x-plugflow-stream';

const streamsOf = new WeakMap<object, Set<SseStream>>();

/** Makes `app` (the root instance) keep a set of its open streams, for endStreams. */
export function trackStreams(app: object): void {
  if (!streamsOf.has(app)) streamsOf.set(app, new Set());
}

/**
 * The open streams of the app a plugin's instance belongs to: fastify makes each plugin's instance
 * from its parent's (the prototype chain), so the tracked root is found by walking up.
 */
function openStreams(instance: object): Set<SseStream> {
  for (let p: object | null = instance; p; p = Object.getPrototypeOf(p) as object | null) {
    const set = streamsOf.get(p);
    if (set) return set;
  }
  return new Set(); // an app that tracks none
}

/** Ends every open stream of the app (its graceful stop). */
export function endStreams(app: object): void {
  for (const s of [...openStreams(app)]) s.end();
}

export class SseStream {
  /** Aborted when the caller goes away or the stream is ended. */
  readonly signal: AbortSignal;
  private readonly abort = new AbortController();
  private readonly heartbeat: NodeJS.Timeout;
  private ended = false;
  /** The framing the client asked for (see the file's comment). */
  private readonly framing: 'ndjson' | 'peer-sse' | 'named-sse';

  constructor(
    req: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    this.signal = this.abort.signal;
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    this.framing = !sse ? 'ndjson' : req.headers[NAMED_EVENTS_HEADER] === 'v1' ? 'named-sse' : 'peer-sse';
    reply.hijack();
    const res = reply.raw;
    const http1 = req.raw.httpVersionMajor === 1;
    res.writeHead(200, {
      'content-type': this.framing === 'ndjson' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      // Over HTTP/1 the connection carries this one stream and closes with it (its socket is of no
      // use to the browser's other requests afterwards). HTTP/2 (the server over TLS) carries all
      // of a browser's streams on one connection, so six open tabs no longer use up its six
      // connections per server; HTTP/2 has no Connection header.
      ...(http1 ? { connection: 'close' } : {}),
    });
    res.flushHeaders();
    if (http1) req.raw.socket.setNoDelay(true);
    this.heartbeat = setInterval(() => {
      if (this.framing !== 'ndjson') this.write(':\n\n');
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on('close', () => this.end());
    // The server's graceful stop ends open streams at once (the browser reconnects, to another
    // replica during a rollout) instead of waiting them out until it is killed.
    const open = openStreams(req.server);
    open.add(this);
    this.signal.addEventListener('abort', () => open.delete(this), { once: true });
  }

  get open(): boolean {
    return !this.ended;
  }

  /** One message: `data: {"result": result}`. Returns false once the stream has ended. */
  send(result: unknown): boolean {
    if (this.framing === 'ndjson') return this.write(`${JSON.stringify({ result })}\n`);
    return this.write(`data: ${JSON.stringify({ result })}\n\n`);
  }

  /**
   * A message of another type (`event: <name>`), which EventSource's onmessage does not see; sent
   * only to a client that asked for named events (nothing in the peer's framing).
   */
  event(name: string, data: unknown): boolean {
    if (this.framing !== 'named-sse') return !this.ended;
    return this.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /**
   * An error after the stream started, `{code, message}` — as `event: error` for a client that
   * reads named events, else as the peer's `data: {"error": …}` — then the stream ends.
   */
  fail(code: number, message: string): void {
    if (this.framing === 'named-sse') this.write(`event: error\ndata: ${JSON.stringify({ code, message })}\n\n`);
    else if (this.framing === 'peer-sse') this.write(`data: ${JSON.stringify({ error: { code, message } })}\n\n`);
    else this.write(`${JSON.stringify({ error: { code, message } })}\n`);
    this.end();
  }

  /**
   * Resolves once what was written has gone to the socket (at once when nothing waits), or the
   * stream ended: a producer that awaits it between chunks holds no more than a chunk's worth for
   * a slow reader.
   */
  drained(): Promise<void> {
    const res = this.reply.raw;
    if (this.ended || !res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      res.on('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.abort.abort();
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }

  private write(text: string): boolean {
    if (this.ended) return false;
    this.reply.raw.write(text);
    return true;
  }
}
