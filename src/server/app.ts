/**
 * The server's HTTP front: a fastify app (routes are registered by the caller) on a node:http
 * server, or over TLS an HTTP/2 server that also speaks HTTP/1.1, whose handler serves the event
 * endpoint itself and passes every other request to fastify. With a guard, the node server gets the
 * timeouts and connection cap, and a request that carries a body reaches fastify only when its
 * Authorization header names a caller and its body fits the size limit and the budget of bodies in
 * flight — else it is refused unread. A graceful stop ends open event streams and HTTP/2 sessions.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../log/logger.js';
import type { Authenticator } from './auth.js';
import { HttpError, badRequest, Code, errorDetails, toHttpError } from './errors.js';
import {
  applyLimits,
  bodyDeadline,
  budgetFull,
  connectionsCheckingInterval,
  declaredTooLarge,
  firstRequest,
  hasBody,
  LIMIT_DEFAULTS,
  lingerThenClose,
  refuseUnread,
  type BodyBudget,
  type ServerLimits,
} from './limits.js';
import type { ServerMetrics } from './metrics.js';
import type { EventHandler } from './routes/events.js';
import { endStreams, trackStreams } from './stream/sse.js';
import { registerBodyParsers } from './body-parsers.js';

/** What the front handler checks before fastify sees a request (limits.ts, auth.ts). */
export interface FrontGuard {
  auth: Authenticator;
  budget: BodyBudget;
  limits: ServerLimits;
}

/**
 * The fastify app of the server (routes are registered by the caller), on a node:http(s) server
 * whose handler serves the event endpoint itself and passes every other request to fastify.
 * With a guard, the node server gets the timeouts and connection cap, and a request that carries
 * a body reaches fastify only when its Authorization header names a caller and its body fits
 * the size limit and the budget of bodies in flight — else it is refused unread and its
 * connection closed. Exported for tests.
 */
export function buildApp(
  tls: { cert: string; key: string } | undefined,
  bodyLimit: number,
  logger: Logger,
  metrics: ServerMetrics,
  events: EventHandler,
  guard?: FrontGuard,
): FastifyInstance {
  // The event endpoint is served by its own node:http handler in front of fastify (the hot
  // path; see routes/events.ts); every other request goes to fastify's routes.
  const serverFactory = (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
    const front = (req: IncomingMessage, res: ServerResponse) => {
      if (guard) {
        firstRequest(req);
        // HTTP/1.1 bodies have node's requestTimeout; HTTP/2 bodies get the same limit here.
        bodyDeadline(req, res, guard.limits.requestTimeoutMs);
      }
      if (missingHost(req)) return rejectMissingHost(req, res, metrics);
      if (events(req, res)) return;
      if (guard && hasBody(req)) {
        const refusal = bodyRefusal(req, res, bodyLimit, guard);
        if (refusal) {
          refuseUnread(req, res, refusal, guard.limits.lingerMs);
          metrics.requests.labels('unmatched', req.method ?? '', String(refusal.status)).inc();
          return;
        }
      }
      handler(req, res);
    };
    // node:http would answer a request without Host itself, with an empty 400; we answer it
    // (in `front`) with an error body that says what is wrong.
    const options = {
      requireHostHeader: false,
      ...(guard ? { connectionsCheckingInterval: connectionsCheckingInterval(guard.limits) } : {}),
    };
    // Over TLS: HTTP/2 (and HTTP/1.1 for clients that do not speak it), so a browser's pages and
    // their event streams share one connection instead of using up its six per server.
    const server = tls
      ? createSecureServer(
          {
            cert: tls.cert,
            key: tls.key,
            allowHTTP1: true,
            settings: {
              maxConcurrentStreams: guard?.limits.maxStreamsPerConnection ?? LIMIT_DEFAULTS.maxStreamsPerConnection,
              maxHeaderListSize: 64 * 1024,
            },
            // Megabytes one session may buffer (unread bodies, unsent replies) before new streams are refused.
            maxSessionMemory: 16,
            ...options,
            ...(guard ? { handshakeTimeout: guard.limits.headersTimeoutMs } : {}),
          },
          front as never,
        )
      : createHttpServer(options, front);
    if (tls) trackSessions(server as Http2SecureServer);
    if (guard) applyLimits(server as unknown as Server, guard.limits, tls !== undefined);
    return server as unknown as Server;
  };
  // Typed loosely: fastify's types pick HTTP/1 or HTTP/2 request types; this server serves both.
  const app = Fastify({
    serverFactory,
    ...(tls ? { http2: true } : {}),
    bodyLimit,
    logger: false,
    routerOptions: { maxParamLength: 512 },
    forceCloseConnections: 'idle',
  } as never) as unknown as FastifyInstance;
  trackStreams(app);
  registerBodyParsers(app);
  // Graceful stop: open event streams end at once, and HTTP/2 sessions are closed (they would
  // otherwise hold the server open until killed).
  app.addHook('preClose', (done) => {
    endStreams(app);
    closeSessions(app.server as unknown as Http2SecureServer);
    done();
  });
  app.setErrorHandler((err, req, reply) => {
    const e = toHttpError(err);
    if (e.status >= 500 && e.code !== Code.Unavailable)
      logger.error('request failed', { method: req.method, route: req.routeOptions.url, ...errorDetails(err) });
    void reply.code(e.status).headers(e.headers).send(e.body());
    // Refused before its body was read (auth in onRequest): discard the rest briefly, then cut.
    if (!req.raw.complete) lingerThenClose(req.raw, guard?.limits.lingerMs ?? LIMIT_DEFAULTS.lingerMs);
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new HttpError(Code.NotFound, `no such endpoint: ${req.method} ${req.url.split('?')[0]}`);
    void reply.code(e.status).send(e.body());
  });
  const debug = logger.isDebugEnabled();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.recordRequest(route, req.method, reply.statusCode, reply.elapsedTime / 1000);
    if (debug)
      logger.debug('request', { method: req.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 });
    done();
  });
  return app;
}

const connectionsOf = new WeakMap<object, { sessions: Set<ServerHttp2Session>; sockets: Set<TLSSocket> }>();

function trackSessions(server: Http2SecureServer): void {
  const open = { sessions: new Set<ServerHttp2Session>(), sockets: new Set<TLSSocket>() };
  connectionsOf.set(server, open);
  server.on('session', (s: ServerHttp2Session) => {
    open.sessions.add(s);
    s.once('close', () => open.sessions.delete(s));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    open.sockets.add(socket);
    socket.once('close', () => open.sockets.delete(socket));
  });
}

/**
 * Closes the HTTP/2 sessions: no new stream starts, streams in flight may finish for two seconds;
 * then what is left is cut (a client that stops reading would otherwise hold the server open).
 */
function closeSessions(server: Http2SecureServer): void {
  const open = connectionsOf.get(server);
  if (!open) return;
  for (const s of open.sessions) s.close();
  setTimeout(() => {
    for (const socket of open.sockets) socket.destroy();
  }, 2_000).unref();
}

/** Why a request with a body may not send it: no acceptable caller, too large, or no room now. */
function bodyRefusal(req: IncomingMessage, res: ServerResponse, bodyLimit: number, guard: FrontGuard): HttpError | undefined {
  try {
    guard.auth.callerOf(req.headers.authorization);
  } catch (err) {
    return toHttpError(err);
  }
  const tooBig = declaredTooLarge(req, bodyLimit);
  if (tooBig) return tooBig;
  if (!guard.budget.reserve(req, res, bodyLimit)) return budgetFull(guard.budget.capacity);
  return undefined;
}

/** HTTP/1.1 requires a Host header (RFC 9112 §3.2); HTTP/1.0 does not. */
function missingHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
}

/** 400 naming the missing header; the body, if any, is not read, so the connection is closed. */
function rejectMissingHost(req: IncomingMessage, res: ServerResponse, metrics: ServerMetrics): void {
  const body = JSON.stringify(badRequest('the request has no Host header, which HTTP/1.1 requires: send "Host: <server address>"').body());
  res.writeHead(400, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.end(body);
  req.resume();
  metrics.requests.labels('unmatched', req.method ?? '', '400').inc();
}
