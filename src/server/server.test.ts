/**
 * The server's front (buildApp: the node:http(s) server, the event endpoint in front of fastify)
 * on real sockets, with requests written by hand: a request without Host gets our 400 error
 * body naming the header, on every endpoint, over HTTP and HTTPS.
 */
import { connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import winston from 'winston';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from './auth.js';
import type { DispatchResult, EventJob } from './dispatch.js';
import { EventQueue } from './event-queue.js';
import { startApiStandIn, statusReply } from '../kube/testing/api-stand-in.js';
import { BodyBudget } from './limits.js';
import { ServerMetrics } from './metrics.js';
import { createEventHandler } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { workflowRoutes } from './routes/workflows.js';
import { buildApp } from './app.js';
import { generateSelfSigned } from '../tls/tls-material.js';

const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });

interface Running {
  app: FastifyInstance;
  port: number;
  metrics: ServerMetrics;
  events: EventJob[];
}

async function start(tls?: { cert: string; key: string }): Promise<Running> {
  // The API server: no templates; a create echoes the object.
  const standIn = await startApiStandIn((req) =>
    req.method === 'POST' ? { status: 201, body: req.body } : statusReply(404, 'NotFound', 'not found'),
  );
  const kube = standIn.client;
  const auth = new Authenticator({ mode: 'server', kube, unsafeServerModeWithoutAuth: true });
  const metrics = new ServerMetrics(false);
  const events: EventJob[] = [];
  const queue = new EventQueue<EventJob, DispatchResult>({
    capacity: 8,
    workers: 1,
    handle: async (job) => {
      events.push(job);
      return { workflows: [], errors: [] };
    },
  });
  const handler = createEventHandler({
    auth,
    queue,
    metrics,
    logger,
    mode: 'async',
    maxBodyBytes: 1024 * 1024,
    budget: new BodyBudget(64 * 1024 * 1024),
  });
  const app = buildApp(tls, 1024 * 1024, logger, metrics, handler);
  await app.register(healthRoutes, { notReady: () => undefined });
  await app.register(workflowRoutes, { kube, auth });
  app.addHook('onClose', () => standIn.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port, metrics, events };
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` as is and reads until the server closes the connection. */
function raw(port: number, request: string, secure = false): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket: Socket = secure
      ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false })
      : tcpConnect({ port, host: '127.0.0.1' });
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, end < 0 ? undefined : end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
        headers,
        body: end < 0 ? '' : text.slice(end + 4),
      });
    });
  });
}

/** A request line, headers and body; Content-Length is added for a body. */
function request(method: string, path: string, headers: string[], body?: string, version = '1.1'): string {
  const all = body === undefined ? headers : [...headers, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`];
  return `${method} ${path} HTTP/${version}\r\n${all.map((h) => `${h}\r\n`).join('')}\r\n${body ?? ''}`;
}

const workflow = JSON.stringify({
  workflow: {
    metadata: { generateName: 'x-' },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox' } }] },
  },
});
const NO_HOST = { code: 3, message: 'the request has no Host header, which HTTP/1.1 requires: send "Host: <server address>"' };

describe('a request without a Host header', () => {
  let s: Running;
  beforeAll(async () => {
    s = await start();
  });
  afterAll(async () => {
    await s.app.close();
  });

  it.each([
    ['POST', '/api/v1/events/ns/push', '{"ref":"main"}'],
    ['POST', '/api/v1/events/ns/', '{"ref":"main"}'],
    ['POST', '/api/v1/workflows/ns', workflow],
    ['GET', '/api/v1/workflows/ns', undefined],
    ['DELETE', '/api/v1/workflows/ns/x', undefined],
    ['GET', '/healthz', undefined],
    ['GET', '/no/such/path', undefined],
  ])('%s %s → 400 with an error body naming the header', async (method, path, body) => {
    const answer = await raw(s.port, request(method, path, ['Connection: keep-alive'], body));
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual(NO_HOST);
  });

  it('queues no event and counts the refusal', async () => {
    const before = s.events.length;
    await raw(s.port, request('POST', '/api/v1/events/ns/', [], '{}'));
    await new Promise((r) => setTimeout(r, 20));
    expect(s.events.length).toBe(before);
    expect(await s.metrics.registry.getSingleMetricAsString('plugflow_server_requests_total')).toMatch(
      /route="unmatched",method="POST",status="400"} [1-9]/,
    );
  });

  it('with Host (even an empty one) the same requests are served', async () => {
    const event = await raw(s.port, request('POST', '/api/v1/events/ns/push', ['Host: 127.0.0.1', 'Connection: close'], '{"ref":"main"}'));
    expect(event).toMatchObject({ status: 200, body: '{}' });
    const created = await raw(s.port, request('POST', '/api/v1/workflows/ns', ['Host: 127.0.0.1', 'Connection: close'], workflow));
    expect(created.status).toBe(200);
    expect(JSON.parse(created.body)).toMatchObject({ kind: 'Workflow', metadata: { namespace: 'ns' } });
    const emptyHost = await raw(s.port, request('GET', '/healthz', ['Host:', 'Connection: close']));
    expect(emptyHost.status).toBe(200);
  });

  it('HTTP/1.0 needs no Host', async () => {
    const health = await raw(s.port, request('GET', '/healthz', [], undefined, '1.0'));
    expect(health.status).toBe(200);
    const event = await raw(s.port, request('POST', '/api/v1/events/ns/', [], '{"a":1}', '1.0'));
    expect(event).toMatchObject({ status: 200, body: '{}' });
  });
});

describe('a request without a Host header over HTTPS', () => {
  let s: Running;
  beforeAll(async () => {
    s = await start(await generateSelfSigned());
  });
  afterAll(async () => {
    await s.app.close();
  });

  it('is answered 400 with the error body too', async () => {
    const answer = await raw(s.port, request('POST', '/api/v1/workflows/ns', [], workflow), true);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual(NO_HOST);
    const served = await raw(s.port, request('POST', '/api/v1/events/ns/', ['Host: localhost', 'Connection: close'], '{}'), true);
    expect(served.status).toBe(200);
  });
});

/** A request written by hand with the given Content-Type header (none when undefined). */
function typed(method: string, path: string, type: string | undefined, body: string): string {
  const headers = ['Host: 127.0.0.1', 'Connection: close', ...(type === undefined ? [] : [`Content-Type: ${type}`])];
  return `${method} ${path} HTTP/1.1\r\n${[...headers, `Content-Length: ${Buffer.byteLength(body)}`].map((h) => `${h}\r\n`).join('')}\r\n${body}`;
}

describe('request bodies by Content-Type', () => {
  let s: Running;
  beforeAll(async () => {
    s = await start();
  });
  afterAll(async () => {
    await s.app.close();
  });

  it("a JSON body without Content-Type (the peer's CLI sends its writes so) is read as JSON", async () => {
    const answer = await raw(s.port, typed('POST', '/api/v1/workflows/ns', undefined, workflow));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Workflow', metadata: { namespace: 'ns', generateName: 'x-' } });
  });

  it('a body of another type is refused with 415, naming the type', async () => {
    const answer = await raw(s.port, typed('POST', '/api/v1/workflows/ns', 'text/csv', 'a,b'));
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toEqual({ code: 3, message: 'unsupported Content-Type "text/csv": send the body as application/json' });
    const plain = await raw(s.port, typed('POST', '/api/v1/workflows/ns', 'text/plain', workflow));
    expect(plain.status).toBe(415);
  });

  it('without Content-Type, JSON that is not JSON or carries __proto__ is a 400', async () => {
    const broken = await raw(s.port, typed('POST', '/api/v1/workflows/ns', undefined, '{"workflow":'));
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ code: 3 });
    const poisoned = await raw(s.port, typed('POST', '/api/v1/workflows/ns', undefined, '{"workflow":{"__proto__":{"polluted":1}}}'));
    expect(poisoned.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
