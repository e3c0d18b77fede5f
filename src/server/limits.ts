/**
 * What one caller can hold of the server: time, sockets and bytes. The server is a node:http(s)
 * server of our own (server.ts, `serverFactory`), so fastify's timeouts never apply: they are set
 * here on the node server itself. And bodies are read only for callers whose Authorization
 * header names one (auth.ts), within a byte budget shared by every body in flight.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { constants as h2constants, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { HttpError, Code, unavailable } from './errors.js';
import { sourceOf } from './auth.js';

export interface ServerLimits {
  /** Longest wait for the request line and headers (node `headersTimeout`). */
  headersTimeoutMs: number;
  /** Longest wait for a whole request, body included (node `requestTimeout`). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** A connection that sends no request at all for this long is closed (node's headersTimeout does not cover it). */
  firstRequestTimeoutMs: number;
  /** Most open connections; beyond it new ones are closed at once. */
  maxConnections: number;
  /** Most open connections from one source (an address; IPv6 by /64); beyond it new ones from there are closed at once. */
  maxConnectionsPerSource: number;
  /** Most HTTP/2 streams open at once on one connection (the SETTINGS the server announces). */
  maxStreamsPerConnection: number;
  /** Most HTTP/2 streams open at once from one source, over all its connections; beyond it a new stream is refused. */
  maxStreamsPerSource: number;
  /** Most bytes of request bodies being received at once, over all requests; beyond it 503. */
  maxBodiesInFlightBytes: number;
  /**
   * After a refusal sent before the body was read, how long the rest of the body is read and
   * discarded (so the caller, still writing, can read the answer) before the connection is cut.
   */
  lingerMs: number;
}

export const LIMIT_DEFAULTS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  firstRequestTimeoutMs: 10_000,
  maxConnections: 1024,
  maxConnectionsPerSource: 128,
  maxStreamsPerConnection: 100,
  maxStreamsPerSource: 256,
  maxBodiesInFlightBytes: 64 * 1024 * 1024,
  lingerMs: 5_000,
};

/** Sets the limits on the node server (call before it listens). */
export function applyLimits(server: Server, limits: ServerLimits, secure = false): void {
  capPerSource(server, limits, secure);
  // Over TLS the server speaks HTTP/2 as well: a session with no stream and no frame for this long
  // (the SSE heartbeat is a frame) is closed, as an idle HTTP/1 keep-alive connection would be.
  if (secure) server.setTimeout(Math.max(limits.keepAliveTimeoutMs, 30_000));
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // Node's timeouts start with a request: a connection that never sends one would stay open.
  // One timer per connection (not a socket timeout, which is re-armed on every read and write),
  // cleared by its first request (`firstRequest`, called by the front handler); after that
  // keepAliveTimeout, headersTimeout and requestTimeout cover every phase in which the caller
  // owes us something. Over TLS the timer starts after the handshake, which has its own timeout
  // (`handshakeTimeout`, set at creation).
  server.on(secure ? 'secureConnection' : 'connection', (socket: Socket & { [FIRST]?: NodeJS.Timeout }) => {
    const timer = setTimeout(() => socket.destroy(), limits.firstRequestTimeoutMs);
    timer.unref();
    socket[FIRST] = timer;
    socket.once('close', () => clearTimeout(timer));
  });
}

const FIRST = Symbol('plugflow.firstRequestTimer');

/** A request arrived on its connection: the connection's no-request timer is done. */
export function firstRequest(req: IncomingMessage): void {
  const socket = req.socket as Socket & { [FIRST]?: NodeJS.Timeout };
  const timer = socket[FIRST];
  if (timer !== undefined) {
    clearTimeout(timer);
    socket[FIRST] = undefined;
  }
}

/**
 * Node checks headersTimeout/requestTimeout on a timer, every 30 s by default: set it at
 * creation to a tenth of the shortest timeout (at least 250 ms) so they apply on time.
 */
export function connectionsCheckingInterval(limits: ServerLimits): number {
  return Math.max(250, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10);
}

const RESERVED = Symbol('plugflow.reservedBodyBytes');
type Reserving = ServerResponse & { [RESERVED]?: { budget: BodyBudget; bytes: number } };

/** Gives back a response's reservation once ('close' follows the end of every response). */
function release(this: Reserving): void {
  const r = this[RESERVED];
  if (r) {
    this[RESERVED] = undefined;
    r.budget.used -= r.bytes;
  }
}

/** Bytes reserved by the bodies in flight: a request reserves what it may send before it is read. */
export class BodyBudget {
  /** @internal */
  used = 0;
  constructor(readonly capacity: number) {}

  get inFlight(): number {
    return this.used;
  }

  /**
   * Reserves room for the request's body (its Content-Length, else `maxBodyBytes`) until the
   * response is done; false when the budget has no room.
   */
  reserve(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): boolean {
    const bytes = this.take(req, maxBodyBytes);
    if (bytes < 0) return false;
    if (bytes === 0) return true;
    (res as Reserving)[RESERVED] = { budget: this, bytes };
    res.once('close', release);
    return true;
  }

  /**
   * The event endpoint's form (no listener per request: it costs more than the rest of an
   * event): the bytes reserved (0 for no body), or -1 when there is no room. The caller gives
   * them back with `give` once the body has arrived or failed.
   */
  take(req: IncomingMessage, maxBodyBytes: number): number {
    const length = Number(req.headers['content-length']);
    const bytes = Number.isFinite(length) && length >= 0 ? Math.min(length, maxBodyBytes) : maxBodyBytes;
    if (bytes === 0) return 0;
    if (this.used + bytes > this.capacity) return -1;
    this.used += bytes;
    return bytes;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

/**
 * Whether the request carries a body: over HTTP/1.1 it says so (Content-Length above 0, or
 * chunked); over HTTP/2 it does unless its HEADERS frame ended the stream — a body needs no
 * Content-Length there, so one without is a body all the same (and reserves the largest).
 */
export function hasBody(req: IncomingMessage): boolean {
  const stream = streamOf(req);
  if (stream) return !stream.endAfterHeaders;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** 503 for a request whose body does not fit in the budget now. */
export function budgetFull(capacity: number): HttpError {
  return unavailable(`too many request bodies are being received right now (${capacity} bytes in flight at most): retry in a second`, 1);
}

/** 413 by Content-Length, before any byte of the body is read. */
export function declaredTooLarge(req: IncomingMessage, maxBodyBytes: number): HttpError | undefined {
  return Number(req.headers['content-length']) > maxBodyBytes
    ? new HttpError(Code.ResourceExhausted, `request body too large: the limit is ${maxBodyBytes} bytes (--max-body-size)`)
    : undefined;
}

/**
 * Sends an error for a request whose body is not (or no longer) read, then lingers: the rest of
 * the body is read and thrown away (nothing is buffered) for at most `lingerMs`, and a caller
 * still sending after that is cut off. Closing at once would make the kernel reset a connection
 * with unread data, and a client still writing its upload would lose the answer.
 */
export function refuseUnread(req: IncomingMessage, res: ServerResponse, err: HttpError, lingerMs: number): void {
  const body = JSON.stringify(err.body());
  res.writeHead(err.status, {
    ...err.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
  lingerThenClose(req, lingerMs);
}

/**
 * Discards the rest of an unread body; cuts it off if it has not ended within `lingerMs`: the
 * connection for HTTP/1, the request's own stream for HTTP/2 (its connection carries the caller's
 * other requests, e.g. the UI's other tabs).
 */
export function lingerThenClose(req: IncomingMessage, lingerMs: number): void {
  req.resume();
  if (req.complete) return;
  const stream = (req as unknown as { stream?: ServerHttp2Stream }).stream;
  const cut = stream ? () => stream.close(h2constants.NGHTTP2_CANCEL) : () => req.socket.destroy();
  const timer = setTimeout(cut, lingerMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  req.once('end', stop);
  (stream ?? req.socket).once('close', stop);
}

/** The HTTP/2 stream of a request, or undefined over HTTP/1. */
export function streamOf(req: IncomingMessage): ServerHttp2Stream | undefined {
  return (req as unknown as { stream?: ServerHttp2Stream }).stream;
}

/**
 * The time limit on an HTTP/2 request's body. Node's requestTimeout covers HTTP/1.1 only: an
 * HTTP/2 body that trickles in would otherwise hold its stream, its reserved bytes and its
 * buffer for ever. When the body has not ended `ms` after the request began, the caller gets
 * 408 (if nothing was answered yet) and the stream is cut.
 */
export function bodyDeadline(req: IncomingMessage, res: ServerResponse, ms: number): void {
  const stream = streamOf(req);
  if (!stream || stream.endAfterHeaders) return;
  const timer = setTimeout(() => {
    if (req.complete) return;
    if (!res.headersSent) {
      const body = JSON.stringify(
        new HttpError(Code.DeadlineExceeded, `the request body did not arrive within ${ms / 1000} s: it is cut off`).body(),
      );
      res.writeHead(408, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    }
    stream.close(h2constants.NGHTTP2_CANCEL);
  }, ms);
  timer.unref();
  const stop = () => clearTimeout(timer);
  req.once('end', stop);
  stream.once('close', stop);
}

/**
 * What one source may hold: connections (both protocols), and HTTP/2 streams over all of its
 * connections. A connection over the cap is closed at once; a stream over it is refused
 * (RST_STREAM REFUSED_STREAM, which clients retry later), so one address cannot take the server's
 * whole connection cap or a thousand streams.
 */
function capPerSource(server: Server, limits: ServerLimits, secure: boolean): void {
  const connections = new Map<string, number>();
  const streams = new Map<string, number>();
  const down = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 1) - 1;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };
  server.on('connection', (socket: Socket) => {
    const source = sourceOf(socket.remoteAddress);
    const n = (connections.get(source) ?? 0) + 1;
    if (n > limits.maxConnectionsPerSource) {
      socket.destroy();
      return;
    }
    connections.set(source, n);
    socket.once('close', () => down(connections, source));
  });
  if (!secure) return;
  server.on('stream', (stream: ServerHttp2Stream) => {
    const source = sourceOf(stream.session?.socket?.remoteAddress);
    const n = (streams.get(source) ?? 0) + 1;
    if (n > limits.maxStreamsPerSource) {
      stream.close(h2constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    streams.set(source, n);
    stream.once('close', () => down(streams, source));
  });
}
