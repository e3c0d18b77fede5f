/**
 * Fuzz target "HTTP/2 bodies": the server's front over TLS as it runs by default (app.ts and
 * limits.ts through src/server/testing/front.ts, in process), sent hostile HTTP/2 streams on real
 * sockets: bodies with no, a true, a short or a long content-length; JSON, garbage and 3 MiB
 * bodies; delivered at once, trickled, stalled without an end, or cancelled half-way; with good,
 * refused, unknown or no tokens; on the REST, event, lint and odd paths; several streams at once
 * on shared sessions.
 *
 * Invariant: every stream ends within the request deadline and a margin — an answer (a 4xx or
 * 503 whose JSON message names the problem, or a 2xx), or a reset (its framing lied, or a stream
 * sharing its session did) — never a hang and never another 5xx; once the streams of a batch have
 * ended, no byte of the body budget is still reserved, and an honest caller on a session of its
 * own gets /healthz and an event accepted; the heap grows by less than 200 MiB over the run.
 */
import { randomBytes } from 'node:crypto';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { MAX_BODY, startFront } from '../../src/server/testing/front.js';
import type { Prng } from '../soak/prng.js';
import { namesProblem, type Tally } from './tally.js';

export const HTTP2_TARGET = 'HTTP/2 bodies (no/lying length, trickle, stall, cancel, 3 MiB)';

const DEADLINE_MS = 1500;
/** A stream that has not ended this long after its deadline is a hang. */
const MARGIN_MS = 5000;
const BATCH = 16;

const PATHS = [
  '/api/v1/workflows/fuzz',
  '/api/v1/workflows/fuzz/lint',
  '/api/v1/events/fuzz/',
  '/api/v1/events/fuzz/github',
  '/api/v1/workflow-templates/fuzz',
  '/healthz',
  '/api/v1/workflows/%ZZ',
  `/api/v1/${'x'.repeat(2000)}`,
];
const TOKENS = ['Bearer good-fuzz', 'Bearer denied-fuzz', 'Bearer unknown-fuzz', '', 'Basic Zm9vOmJhcg==', `Bearer ${'a'.repeat(9000)}`];
const OK = new Set([200, 201]);

interface Outcome {
  status: number;
  body: string;
  reset?: number;
  cancelled: boolean;
  ms: number;
}

export async function fuzzHttp2Bodies(rng: Prng, tally: Tally, per: number, say: (line: string) => void = () => {}): Promise<void> {
  const t = tally.of(HTTP2_TARGET);
  const front = await startFront({ requestTimeoutMs: DEADLINE_MS, maxBodiesInFlightBytes: 8 * MAX_BODY }, {}, { tls: true });
  const heapBefore = process.memoryUsage().heapUsed;
  const sessions: ClientHttp2Session[] = [];
  const seen = new Map<string, number>();
  try {
    for (let done = 0; done < per; done += BATCH) {
      while (sessions.length < 3) sessions.push(await open(front.port));
      const n = Math.min(BATCH, per - done);
      const runs = Array.from({ length: n }, (_, i) => {
        const label = `#${done + i}`;
        const c = rng.pick(sessions);
        return oneStream(rng.fork(label), c).then((o) => ({ label, ...o }));
      });
      for (const r of await Promise.all(runs)) {
        t.tried++;
        const what = `${r.label} ${r.input}`;
        const o = r.outcome;
        // An answer is judged by its status (the server then resets the rest of a body it will not read).
        const kind =
          o === 'hang' ? 'hang' : o.status ? String(o.status) : o.cancelled ? 'cancelled' : o.reset !== undefined ? 'reset' : 'closed';
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
        if (o === 'hang') tally.fail(t.target, `${what}: no end within ${DEADLINE_MS + MARGIN_MS} ms`);
        else if (o.status === 0)
          t.rejected++; // reset, cancelled, or the session closed for a framing lie
        else if (OK.has(o.status)) t.accepted++;
        else if (o.status >= 500 && o.status !== 503) tally.fail(t.target, `${what}: ${o.status} ${o.body.slice(0, 200)}`);
        else if (o.status >= 400 && namesProblem(o.body)) t.rejected++;
        else tally.fail(t.target, `${what}: ${o.status} without a message naming the problem: ${o.body.slice(0, 200)}`);
      }
      // Sessions the server closed (a protocol error) are replaced.
      for (let i = sessions.length - 1; i >= 0; i--) if (sessions[i]!.closed || sessions[i]!.destroyed) sessions.splice(i, 1);
      await settle(front.budget);
      if (front.budget.inFlight !== 0)
        tally.fail(t.target, `after batch ending ${done + n}: ${front.budget.inFlight} bytes still reserved in the body budget`);
      const honest = await honestCaller(front.port);
      if (honest) tally.fail(t.target, `after batch ending ${done + n}: ${honest}`);
    }
    const grewMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    const outcomes = [...seen].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}×${n}`);
    say(`http2: ${t.tried} streams (${outcomes.join(', ')}), heap grew ${grewMiB.toFixed(1)} MiB`);
    if (grewMiB > 200) tally.fail(t.target, `the heap grew ${grewMiB.toFixed(0)} MiB over the run`);
  } finally {
    for (const c of sessions) c.destroy();
    await front.app.close();
  }
}

function open(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const c = h2connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    c.on('error', () => {});
    c.once('connect', () => resolve(c));
    setTimeout(() => reject(new Error('could not open an HTTP/2 session within 5 s')), 5000).unref();
  });
}

async function oneStream(rng: Prng, c: ClientHttp2Session): Promise<{ input: string; outcome: Outcome | 'hang' }> {
  const path = rng.pick(PATHS);
  const method = rng.weighted([
    [6, 'POST'],
    [1, 'PUT'],
    [1, 'GET'],
  ] as const);
  const token = rng.chance(0.5) ? TOKENS[0]! : rng.pick(TOKENS);
  const body = bodyOf(rng);
  const lengthMode = rng.pick(['none', 'true', 'short', 'long', 'none'] as const);
  const delivery = rng.pick(['whole', 'whole', 'trickle', 'stall', 'cancel', 'chunks'] as const);
  const input = `${method} ${path.slice(0, 60)} token=${token.slice(0, 14) || 'none'} body=${body.length}B length=${lengthMode} ${delivery}`;
  const headers: Record<string, string> = { ':method': method, ':path': path, 'content-type': 'application/json' };
  if (token) headers.authorization = token;
  if (lengthMode === 'true') headers['content-length'] = String(body.length);
  if (lengthMode === 'short') headers['content-length'] = String(Math.max(0, body.length - rng.int(1, 100)));
  if (lengthMode === 'long') headers['content-length'] = String(body.length + rng.int(1, 100_000));
  const t0 = performance.now();
  let stream;
  try {
    stream = c.request(headers, { endStream: false });
  } catch {
    return { input, outcome: { status: 0, body: '', cancelled: true, ms: 0 } }; // the session is gone
  }
  const ended = new Promise<Outcome>((resolve) => {
    let status = 0;
    let text = '';
    let cancelled = false;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d: Buffer) => {
      if (text.length < 4096) text += d.toString('utf8');
    });
    stream.on('error', (err: NodeJS.ErrnoException) => (cancelled ||= err.code === 'ERR_HTTP2_STREAM_CANCEL'));
    stream.on('close', () =>
      resolve({ status, body: text, cancelled, ms: performance.now() - t0, ...(stream.rstCode ? { reset: stream.rstCode } : {}) }),
    );
  });
  const write = (b: Buffer) => !stream.closed && !stream.destroyed && stream.write(b);
  const deliver = async () => {
    if (delivery === 'whole') return stream.end(body);
    if (delivery === 'chunks') {
      for (let i = 0; i < body.length; i += 16 * 1024) write(body.subarray(i, i + 16 * 1024));
      return stream.end();
    }
    if (delivery === 'trickle') {
      for (let i = 0; i < body.length && !stream.closed; i += 3) {
        write(body.subarray(i, i + 3));
        await new Promise((r) => setTimeout(r, rng.int(50, 150)));
      }
      return !stream.closed && stream.end();
    }
    write(body.subarray(0, Math.floor(body.length / 2)));
    if (delivery === 'cancel') {
      await new Promise((r) => setTimeout(r, rng.int(0, 300)));
      stream.close(0x8); // CANCEL
    }
    // stall: never ends; the server's deadline must.
  };
  void deliver().catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hang'>((resolve) => (timer = setTimeout(() => resolve('hang'), DEADLINE_MS + MARGIN_MS)));
  const outcome = await Promise.race([ended, hang]);
  clearTimeout(timer);
  if (outcome === 'hang') stream.close(0x8);
  return { input, outcome };
}

function bodyOf(rng: Prng): Buffer {
  switch (rng.int(0, 6)) {
    case 0:
      return Buffer.alloc(0);
    case 1:
      return Buffer.from(JSON.stringify({ workflow: { metadata: { generateName: 'fz-' }, spec: { entrypoint: 'main', templates: [] } } }));
    case 2:
      return Buffer.from(JSON.stringify({ kind: 'order', n: rng.int(0, 1e6), pad: 'p'.repeat(rng.int(0, 20_000)) }));
    case 3:
      return randomBytes(rng.int(1, 64 * 1024));
    case 4:
      return Buffer.from(`{"a":${'['.repeat(rng.int(1, 100_000))}`);
    case 5:
      return Buffer.alloc(rng.int(MAX_BODY - 10, 3 * MAX_BODY), 'x');
    default:
      return Buffer.from('{"truncated": "');
  }
}

/** Waits a moment for the server to let go of what the batch's streams reserved. */
async function settle(budget: { inFlight: number }): Promise<void> {
  for (let i = 0; i < 40 && budget.inFlight !== 0; i++) await new Promise((r) => setTimeout(r, 50));
}

/**
 * What an honest caller on a session of its own gets meanwhile: /healthz answers 200 and an event
 * with a good token is accepted (200). Returns what went wrong, or undefined.
 */
async function honestCaller(port: number): Promise<string | undefined> {
  const c = await open(port).catch(() => undefined);
  if (!c) return 'an honest caller could not open a session';
  const ask = (headers: Record<string, string>, body?: string) =>
    new Promise<number>((resolve) => {
      const s = c.request(headers, { endStream: body === undefined });
      s.on('error', () => resolve(-1));
      s.on('response', (h) => resolve(Number(h[':status'])));
      if (body !== undefined) s.end(body);
      setTimeout(() => resolve(0), 2000).unref();
    });
  try {
    const health = await ask({ ':path': '/healthz' });
    if (health !== 200) return `/healthz answered ${health || 'nothing within 2 s'}`;
    const event = await ask(
      { ':method': 'POST', ':path': '/api/v1/events/fuzz/', authorization: 'Bearer good-honest', 'content-type': 'application/json' },
      '{"honest": true}',
    );
    if (event !== 200) return `an honest event was answered ${event || 'nothing within 2 s'}`;
    return undefined;
  } finally {
    c.destroy();
  }
}
