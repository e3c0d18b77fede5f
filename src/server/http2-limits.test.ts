/**
 * HTTP/2 callers against the server's front over TLS (issue 44, T4-5 and T4-6), on real sockets:
 * an HTTP/2 body needs no Content-Length, so the limits must not hang on one. A body that
 * trickles is cut at the request deadline (node's requestTimeout covers HTTP/1.1 only); every
 * body without a length reserves the largest in the budget of bodies in flight, so a crowd of
 * them is refused before it is read; and one source is held to its share of connections and of
 * streams, over all of its connections.
 */
import { connect as h2connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BODY, startFront, type Running } from './testing/front.js';

let s: Running | undefined;
const sessions: ClientHttp2Session[] = [];
afterEach(async () => {
  for (const c of sessions.splice(0)) c.destroy();
  await s?.app.close();
  s = undefined;
});

function session(port: number, localAddress = '127.0.0.1'): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const c = h2connect(`https://127.0.0.1:${port}`, {
      createConnection: () =>
        tlsConnect({ socket: netConnect({ host: '127.0.0.1', port, localAddress }), rejectUnauthorized: false, ALPNProtocols: ['h2'] }),
    });
    sessions.push(c);
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

interface Outcome {
  status: number;
  body: string;
  /** The RST_STREAM code when the server reset the stream. */
  reset?: number;
  ms: number;
}

/** Opens a POST stream without Content-Length and writes `first`; nothing more unless `trickle` (a byte every 100 ms). */
function slowPost(
  c: ClientHttp2Session,
  path: string,
  first: string,
  trickle = false,
): { stream: ClientHttp2Stream; done: Promise<Outcome> } {
  const t0 = performance.now();
  const stream = c.request(
    { ':method': 'POST', ':path': path, authorization: 'Bearer good-1', 'content-type': 'application/json' },
    { endStream: false },
  );
  stream.write(first);
  const timer = trickle ? setInterval(() => !stream.closed && stream.write(' '), 100) : undefined;
  const done = new Promise<Outcome>((resolve) => {
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d: Buffer) => (body += d.toString()));
    stream.on('error', () => {});
    stream.on('close', () => {
      clearInterval(timer);
      resolve({ status, body, ms: performance.now() - t0, ...(stream.rstCode ? { reset: stream.rstCode } : {}) });
    });
  });
  return { stream, done };
}

describe('HTTP/2 request bodies', () => {
  it('a body without Content-Length that trickles is cut at the request deadline, on the REST routes and the event endpoint', async () => {
    s = await startFront({ requestTimeoutMs: 800 }, {}, { tls: true });
    const c = await session(s.port);
    const rest = slowPost(c, '/api/v1/workflows/ns', '{"workflow":', true);
    const event = slowPost(c, '/api/v1/events/ns/', '{"a":', true);
    const [r, e] = await Promise.all([rest.done, event.done]);
    for (const o of [r, e]) {
      expect(o.status).toBe(408);
      expect(JSON.parse(o.body).message).toMatch(/the request body did not arrive within 0.8 s/);
      expect(o.ms).toBeLessThan(5000);
    }
    // Its reservation is back; the session itself is still good for the caller's other requests.
    expect(s.budget.inFlight).toBe(0);
    const ok = c.request({ ':path': '/healthz' });
    const status = await new Promise((resolve) => ok.on('response', (h) => resolve(h[':status'])));
    ok.close();
    expect(status).toBe(200);
  });

  it('every body without a length counts as the largest: a crowd of them past the budget is refused unread, and memory stays flat', async () => {
    s = await startFront({ requestTimeoutMs: 1500, maxBodiesInFlightBytes: 4 * MAX_BODY }, {}, { tls: true });
    const c = await session(s.port);
    const before = process.memoryUsage().heapUsed;
    const posts = Array.from({ length: 40 }, () => slowPost(c, '/api/v1/workflows/ns', '{"workflow": "' + 'x'.repeat(32 * 1024)));
    await new Promise((r) => setTimeout(r, 300));
    expect(s.budget.inFlight).toBeLessThanOrEqual(4 * MAX_BODY);
    const outcomes = await Promise.all(posts.map((p) => p.done));
    const counts = outcomes.reduce<Record<number, number>>((m, o) => ((m[o.status] = (m[o.status] ?? 0) + 1), m), {});
    // Four read (each reserved 1 MiB) until their deadline, the other 36 refused with 503 at once.
    expect(counts).toEqual({ 408: 4, 503: 36 });
    expect(s.budget.inFlight).toBe(0);
    const grewMiB = (process.memoryUsage().heapUsed - before) / 2 ** 20;
    console.log(`[http2] 40 streams without a length, 4 MiB budget: heap grew ${grewMiB.toFixed(1)} MiB`);
    expect(grewMiB).toBeLessThan(64);
  });
});

describe('per-source caps', () => {
  it("one source's streams are capped over all its connections; another source still gets its own", async () => {
    s = await startFront({ maxStreamsPerConnection: 8, maxStreamsPerSource: 12, requestTimeoutMs: 3000 }, {}, { tls: true });
    const [a, b] = [await session(s.port), await session(s.port)];
    const held = [
      ...Array.from({ length: 8 }, () => slowPost(a, '/api/v1/events/ns/', '{')),
      ...Array.from({ length: 8 }, () => slowPost(b, '/api/v1/events/ns/', '{')),
    ];
    const refused = await Promise.race([
      Promise.all(held.slice(12).map((p) => p.done)),
      new Promise<Outcome[]>((r) => setTimeout(() => r([]), 2000)),
    ]);
    expect(refused.map((o) => o.reset)).toEqual([
      constants.NGHTTP2_REFUSED_STREAM,
      constants.NGHTTP2_REFUSED_STREAM,
      constants.NGHTTP2_REFUSED_STREAM,
      constants.NGHTTP2_REFUSED_STREAM,
    ]);
    // Another address of this machine is another source: its stream is served.
    const other = await session(s.port, '127.0.0.2');
    const ok = other.request({ ':path': '/healthz' });
    expect(await new Promise((resolve) => ok.on('response', (h) => resolve(h[':status'])))).toBe(200);
    for (const p of held) p.stream.close();
  });

  it('connections from one source beyond its cap are closed at once; other sources are served', async () => {
    s = await startFront({ maxConnectionsPerSource: 3 }, {}, { tls: true });
    for (let i = 0; i < 3; i++) await session(s.port);
    await expect(session(s.port)).rejects.toThrow();
    const other = await session(s.port, '127.0.0.2');
    const ok = other.request({ ':path': '/healthz' });
    expect(await new Promise((resolve) => ok.on('response', (h) => resolve(h[':status'])))).toBe(200);
  });
});
