/**
 * The event endpoint: `POST /api/v1/events/{namespace}/{discriminator}` (an empty
 * discriminator keeps the trailing slash: `/api/v1/events/{namespace}/`).
 *
 * This is the one hot path of the server, so it is a plain `node:http` handler placed in front
 * of fastify (server.ts passes every other request on): no router, hooks, reply objects or
 * per-request closures, only what an event needs. Any JSON body is accepted, whatever the
 * Content-Type says (senders often post JSON without one). In order: the caller (401), its
 * right to list the namespace's bindings (403, a cached access review; 429 when reviews of new
 * tokens are rate-limited) — all before a byte of the body is read — then the body (413 over the
 * limit, 503 when the budget of bodies in flight is full, 400 unless JSON). Then, by mode:
 * - `sync` (the default, durable without a bus): the bounded queue (full is 503 with
 *   `Retry-After`), and the answer once the bindings ran, naming the workflows created and the
 *   failures — 200 means the workflows exist;
 * - `bus` (`--event-bus`): the event is stored in the replicated stream (event-bus.ts) and the
 *   answer is 200 once the stream acknowledged it; the bus being unreachable is 503;
 * - `async`: the bounded queue, and `200 {}` at once — fastest, but an event still in the
 *   queue dies with the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseUserJson } from '../../api/index.js';
import { NAMESPACE_NAME } from '../../api/index.js';
import type { Logger } from '../../log/logger.js';
import { EVENT_ACCESS, type Authenticator, type Caller } from '../auth.js';
import type { DispatchResult, EventJob } from '../dispatch.js';
import { eventIdFromHeaders, EventIdError } from '../event-id.js';
import { HttpError, badRequest, Code, errorDetails, notFound, toHttpError, unavailable } from '../errors.js';
import type { EventQueue, Outcome } from '../event-queue.js';
import { budgetFull, declaredTooLarge, LIMIT_DEFAULTS, lingerThenClose, type BodyBudget } from '../limits.js';
import type { EventReceipt, ServerMetrics } from '../metrics.js';
import type { EventBus } from '../event-bus.js';
import { errorMessage } from '../../log/error-message.js';

export type DispatchMode = 'async' | 'sync';

export interface EventRouteDeps {
  auth: Authenticator;
  queue: EventQueue<EventJob, DispatchResult>;
  metrics: ServerMetrics;
  logger: Logger;
  mode: DispatchMode;
  /** The event bus: when given, accepting an event is storing it there (`mode` is not used). */
  bus?: EventBus;
  /** Largest body in bytes; beyond it 413. */
  maxBodyBytes: number;
  /** Bytes of bodies in flight, shared with the other routes; full → 503. */
  budget: BodyBudget;
  /** After a refusal, how long the unread rest of a body is discarded before the connection is cut (default 5 s). */
  lingerMs?: number;
  /**
   * Sync mode: longest wait for the dispatch before answering 202 (default 9 s, under the 10 s
   * promise). A 202 is not an acceptance: the event is still in this process.
   */
  syncReplyTimeoutMs?: number;
}

/** Handles a request if it is an event POST; returns false to leave it to the other routes. */
export type EventHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const PREFIX = '/api/v1/events/';
/** Route labels in metrics (the same as fastify's route patterns elsewhere). */
const ROUTE_EMPTY = '/api/v1/events/:namespace/';
const ROUTE_DISCRIMINATOR = '/api/v1/events/:namespace/:discriminator';
const JSON_TYPE = 'application/json; charset=utf-8';
const ACCEPTED_HEADERS = { 'content-type': JSON_TYPE, 'content-length': '2' };

export function createEventHandler(deps: EventRouteDeps): EventHandler {
  const endpoint = new EventEndpoint(deps);
  return (req, res) => endpoint.handle(req, res);
}

/** One event request on its way: the listeners of its body stream find it on the request. */
class EventCall {
  namespace = '';
  discriminator = '';
  /** From the request's id headers (event-id.ts). */
  eventId: string | undefined;
  caller!: Caller;
  chunks: Buffer[] = [];
  size = 0;
  over = false;
  /** Bytes reserved in the budget of bodies in flight, given back when the body ends or fails. */
  reserved = 0;

  constructor(
    readonly endpoint: EventEndpoint,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly route: string,
    readonly started: number,
  ) {}
}

const CALL = Symbol('plugflow.eventCall');
type CarryingRequest = IncomingMessage & { [CALL]?: EventCall };

function onData(this: CarryingRequest, chunk: Buffer): void {
  const call = this[CALL]!;
  if (call.over) return;
  call.size += chunk.length;
  if (call.size > call.endpoint.maxBodyBytes) {
    call.over = true;
    call.chunks = [];
    call.endpoint.release(call);
    call.endpoint.fail(call, tooLarge(call.endpoint.maxBodyBytes), true);
    return;
  }
  call.chunks.push(chunk);
}

function onEnd(this: CarryingRequest): void {
  const call = this[CALL]!;
  if (call.over) return;
  call.over = true;
  call.endpoint.release(call);
  const text = call.chunks.length === 1 ? call.chunks[0].toString('utf8') : Buffer.concat(call.chunks).toString('utf8');
  call.endpoint.received(call, text);
}

/** The body failed: the client went away, or the request timeout cut it off. */
function onError(this: CarryingRequest, err: Error): void {
  const call = this[CALL]!;
  call.endpoint.release(call);
  if (call.over) return;
  call.over = true;
  call.endpoint.fail(call, err);
}

class EventEndpoint {
  readonly maxBodyBytes: number;
  private readonly debug: boolean;

  constructor(private readonly deps: EventRouteDeps) {
    this.maxBodyBytes = deps.maxBodyBytes;
    this.debug = deps.logger.isDebugEnabled();
  }

  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '';
    if (req.method !== 'POST' || !url.startsWith(PREFIX)) return false;
    const started = performance.now();
    const q = url.indexOf('?');
    const rest = url.slice(PREFIX.length, q < 0 ? undefined : q);
    const slash = rest.indexOf('/');
    if (slash < 0 || rest.indexOf('/', slash + 1) >= 0) {
      const message =
        slash < 0
          ? `no such endpoint: with an empty discriminator the path must end in a slash: ${PREFIX}${rest}/`
          : `no such endpoint: POST ${url.slice(0, q < 0 ? undefined : q)} (the discriminator cannot contain "/")`;
      this.refuse(new EventCall(this, req, res, 'unmatched', started), notFound(message));
      return true;
    }
    const call = new EventCall(this, req, res, slash === rest.length - 1 ? ROUTE_EMPTY : ROUTE_DISCRIMINATOR, started);
    let access: ReturnType<Authenticator['access']>;
    try {
      const namespace = decodeURIComponent(rest.slice(0, slash));
      if (!NAMESPACE_NAME.test(namespace)) throw badRequest(`"${namespace}" is not a valid namespace name`);
      call.namespace = namespace;
      call.discriminator = decodeURIComponent(rest.slice(slash + 1));
      call.eventId = eventIdFromHeaders(req.rawHeaders);
      call.caller = this.deps.auth.callerOf(req.headers.authorization, req.socket.remoteAddress);
      access = this.deps.auth.access(call.caller, namespace, EVENT_ACCESS);
    } catch (err) {
      const refusal =
        err instanceof URIError
          ? badRequest('the path is not valid percent-encoding')
          : err instanceof EventIdError
            ? badRequest(err.message)
            : err;
      this.refuse(call, refusal);
      return true;
    }
    if (access === undefined) this.readBody(call);
    else if (access instanceof HttpError) this.refuse(call, access);
    else
      access.then(
        (refusal) => (refusal ? this.refuse(call, refusal) : this.readBody(call)),
        (err: unknown) => this.refuse(call, err),
      );
    return true;
  }

  /**
   * Reads the body as UTF-8 text, once the caller is known to be allowed: over the limit → 413
   * (by Content-Length or as it arrives); no room in the shared budget of bodies in flight → 503.
   */
  private readBody(call: EventCall): void {
    const req = call.req as CarryingRequest;
    const tooBig = declaredTooLarge(req, this.maxBodyBytes);
    if (tooBig) return this.refuse(call, tooBig);
    const reserved = this.deps.budget.take(req, this.maxBodyBytes);
    if (reserved < 0) return this.refuse(call, budgetFull(this.deps.budget.capacity));
    call.reserved = reserved;
    req[CALL] = call;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  }

  release(call: EventCall): void {
    if (call.reserved > 0) {
      this.deps.budget.give(call.reserved);
      call.reserved = 0;
    }
  }

  /** The whole body arrived: parse it, queue the event, reply. */
  received(call: EventCall, text: string): void {
    let payload: unknown;
    try {
      if (text.trim() === '') throw new Error('the body is empty');
      payload = parseUserJson(text, 'the event body');
    } catch (err) {
      this.receipt('invalid');
      return this.fail(call, badRequest(err instanceof SyntaxError ? `the event body must be JSON: ${err.message}` : errorMessage(err)));
    }
    const { queue, bus } = this.deps;
    if (bus) return this.store(call, bus, text);
    const job: EventJob = {
      namespace: call.namespace,
      discriminator: call.discriminator,
      payload,
      headers: call.req.rawHeaders,
      ...(call.eventId !== undefined ? { eventId: call.eventId } : {}),
      caller: call.caller,
      receivedAt: call.started,
    };
    const sync = this.deps.mode === 'sync';
    const done = sync ? queue.offerAndWait(job) : queue.offer(job);
    if (!done) {
      if (!queue.accepting) {
        this.receipt('shutting_down');
        return this.fail(call, unavailable('the server is shutting down: send the event to another replica', 1));
      }
      this.receipt('queue_full');
      return this.fail(
        call,
        unavailable(
          queue.refusal(job) === 'share'
            ? `namespace "${job.namespace}" holds its share of the event queue (${queue.laneCapacity} of ${queue.capacity} events in process; each namespace gets at most half, so others keep room): retry later, or raise --event-operation-queue-size`
            : `the event queue is full (${queue.capacity} events in process): retry later, or raise --event-operation-queue-size / --event-worker-count`,
          1,
        ),
      );
    }
    this.receipt('accepted');
    if (!sync) {
      call.res.writeHead(200, ACCEPTED_HEADERS);
      call.res.end('{}');
      return this.finish(call, 200);
    }
    const wait = this.deps.syncReplyTimeoutMs ?? 9000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), wait)));
    void Promise.race([done as Promise<Outcome<DispatchResult>>, timeout]).then((outcome) => {
      clearTimeout(timer);
      if (outcome === 'timeout')
        this.send(
          call,
          202,
          JSON.stringify({
            message: `the event is still being dispatched after ${wait / 1000}s and is not yet durable: resend it with the same X-Event-Id to be sure (a repeat creates no second workflow)`,
          }),
        );
      else if (outcome.ok) this.send(call, 200, JSON.stringify(outcome.value));
      else this.fail(call, new HttpError(Code.Internal, `dispatching the event failed: ${errorMessage(outcome.error)}`));
    });
  }

  /** Bus mode: 200 once the replicated stream holds the event, naming the id it is known by. */
  private store(call: EventCall, bus: EventBus, body: string): void {
    const job = {
      namespace: call.namespace,
      discriminator: call.discriminator,
      headers: call.req.rawHeaders,
      ...(call.eventId !== undefined ? { eventId: call.eventId } : {}),
      caller: call.caller,
    };
    bus.store(job, body).then(
      (stored) => {
        this.receipt(stored.duplicate ? 'duplicate' : 'accepted');
        this.send(call, 200, JSON.stringify(stored.duplicate ? { id: stored.id, duplicate: true } : { id: stored.id }));
      },
      (err: unknown) => {
        this.receipt('bus_unavailable');
        this.deps.logger.warn('the event bus did not store an event', { namespace: call.namespace, error: errorMessage(err) });
        this.fail(call, unavailable(`the event bus did not store the event, so it is not accepted: ${errorMessage(err)}`, 1));
      },
    );
  }

  /**
   * A refusal before the body is read (auth, path, size, budget): counted, error sent, and the
   * rest of the body discarded for a short while, then the connection cut (limits.ts).
   */
  private refuse(call: EventCall, err: unknown): void {
    if (err instanceof HttpError) this.receipt(receiptOf(err));
    this.fail(call, err, true);
  }

  /** Sends the error; `unread`: the body is not read to its end, so linger then cut the connection. */
  fail(call: EventCall, err: unknown, unread = false): void {
    const e = toHttpError(err);
    if (e.status >= 500 && e.code !== Code.Unavailable) this.deps.logger.error('event request failed', errorDetails(err));
    this.send(call, e.status, JSON.stringify(e.body()), e.headers);
    if (unread) lingerThenClose(call.req, this.deps.lingerMs ?? LIMIT_DEFAULTS.lingerMs);
  }

  private send(call: EventCall, status: number, body: string, headers: Record<string, string> = {}): void {
    call.res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(body)), ...headers });
    call.res.end(body);
    this.finish(call, status);
  }

  private finish(call: EventCall, status: number): void {
    const ms = performance.now() - call.started;
    this.deps.metrics.recordRequest(call.route, 'POST', status, ms / 1000);
    if (this.debug) this.deps.logger.debug('request', { method: 'POST', route: call.route, status, ms: Math.round(ms * 10) / 10 });
  }

  private receipt(r: EventReceipt): void {
    this.deps.metrics.recordReceipt(r);
  }
}

function receiptOf(err: HttpError): EventReceipt {
  if (err.code === Code.Unauthenticated) return 'unauthorized';
  if (err.code === Code.PermissionDenied) return 'forbidden';
  if (err.status === 429) return 'rate_limited';
  if (err.code === Code.Unavailable) return 'busy';
  return 'invalid';
}

function tooLarge(limit: number): HttpError {
  return new HttpError(Code.ResourceExhausted, `request body too large: the limit is ${limit} bytes (--max-body-size)`);
}
