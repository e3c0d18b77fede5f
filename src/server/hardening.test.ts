/**
 * Hostile callers against the server's front on real sockets (issue 10 items 4–7), with a
 * stand-in API server that counts access reviews: the caller is authenticated and what can be
 * authorized is before a byte of any body is read; stalled uploads are refused unread or cut
 * by the request timeout; bodies in flight share a byte budget; connections are capped; tokens
 * are hashed, size-capped, cached in a bounded map and reviews of new ones rate-limited — per
 * source address and token shape first, so a flood does not starve new valid callers; server
 * mode needs a guard.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, CREATE_WORKFLOW_ACCESS, MAX_TOKEN_BYTES, sourceOf, tokenShape } from './auth.js';
import { MAX_BODY, standIn, startFront as start, type Running } from './testing/front.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
  /** Time to the first byte of the answer (or to the close / the end of the wait). */
  ms: number;
}

/**
 * Sends the head of a request (and `sent` bytes of its body), then nothing more: resolves with
 * the reply once the server answers and closes (or, with `untilClose` false, once the whole
 * answer arrived), or after `waitMs` (status 0: no answer).
 */
function stall(port: number, head: string, sent: string, waitMs = 3000, untilClose = true): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let firstByte: number | undefined;
    const socket: Socket = connect({ port, host: '127.0.0.1' });
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, end < 0 ? undefined : end).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
        headers,
        body: end < 0 ? '' : text.slice(end + 4),
        closed,
        ms: (firstByte ?? performance.now()) - started,
      });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.once('connect', () => socket.write(head + sent));
    socket.on('data', (c: Buffer) => {
      firstByte ??= performance.now();
      chunks.push(c);
      if (untilClose) return;
      // A whole answer (head and Content-Length bytes) is enough when the request was complete.
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])) done(false);
    });
    socket.on('error', () => {});
    socket.on('close', () => done(true));
  });
}

const head = (path: string, length: number, token?: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}\r\n`;

/** The reported DAG: a 5,000-task chain plus 6,000 tasks depending on its end (~547 KB). */
function bigDag(): string {
  const tasks = [
    ...Array.from({ length: 5000 }, (_, i) => ({ name: `c${i}`, template: 'main', ...(i > 0 ? { dependencies: [`c${i - 1}`] } : {}) })),
    ...Array.from({ length: 6000 }, (_, i) => ({ name: `f${i}`, template: 'main', dependencies: ['c4999'] })),
  ];
  return JSON.stringify({
    workflow: {
      metadata: { generateName: 'big-' },
      spec: {
        entrypoint: 'dag',
        templates: [
          { name: 'dag', dag: { tasks } },
          { name: 'main', container: { image: 'busybox' } },
        ],
      },
    },
  });
}

describe('authentication before the body', () => {
  let s: Running;
  beforeAll(async () => {
    s = await start();
  });
  afterAll(async () => {
    await s.app.close();
  });

  it('answers a 547 KB DAG with a bogus token 401 before its body arrives, cuts the stalled upload, and /healthz stays prompt', async () => {
    const body = bigDag();
    expect(body.length).toBeGreaterThan(500_000);
    // Only the head and one byte are sent: the answer cannot depend on the body.
    const answer = await stall(s.port, head('/api/v1/workflows/ns', body.length, 'not-a-real-token'), body.slice(0, 1));
    expect(answer.status).toBe(401);
    expect(answer.closed).toBe(true);
    expect(answer.ms).toBeLessThan(1000);
    expect(s.seen.creates).toBe(0);
    const health = await fetch(`http://127.0.0.1:${s.port}/healthz`);
    expect(health.status).toBe(200);
  });

  it('refuses a token that may not create workflows (403) before the body, and one without a header (401)', async () => {
    const denied = await stall(s.port, head('/api/v1/workflows/ns', 1000, 'denied-1'), '{');
    expect(denied).toMatchObject({ status: 403, closed: true });
    expect(JSON.parse(denied.body).message).toMatch(/may not create workflows\.plugflow\.io in namespace "ns"/);
    const none = await stall(s.port, head('/api/v1/workflows/ns', 1000), '{');
    expect(none).toMatchObject({ status: 401, closed: true });
    const event = await stall(s.port, head('/api/v1/events/ns/', 1000), '{');
    expect(event).toMatchObject({ status: 401, closed: true });
    const unknownRoute = await stall(s.port, head('/no/such/route', 1000), '{');
    expect(unknownRoute).toMatchObject({ status: 401, closed: true });
  });

  it('refuses the same DAG from an allowed token with 400 naming the field, quickly', async () => {
    const res = await fetch(`http://127.0.0.1:${s.port}/api/v1/workflows/ns`, {
      method: 'POST',
      headers: { authorization: 'Bearer good-1', 'content-type': 'application/json' },
      body: bigDag(),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /spec\.templates\[dag\]\.dag\.tasks has 11000 tasks; a DAG template may have at most 1000/,
    );
  });
});

describe('stalled and oversized uploads', () => {
  let s: Running | undefined;
  afterEach(async () => {
    await s?.app.close();
    s = undefined;
  });

  it('300 sockets each announcing 1 MiB − 1 byte with no Authorization, then stalling, are refused unread and closed', async () => {
    s = await start({ maxConnectionsPerSource: 10_000 }); // one address floods on purpose: the per-source cap is tested on its own
    const before = process.memoryUsage().heapUsed;
    const part = 'x'.repeat(64 * 1024);
    const answers = await Promise.all(
      Array.from({ length: 300 }, () => stall(s!.port, head('/api/v1/workflows/ns', MAX_BODY - 1), part, 15_000)),
    );
    const outcomes = answers.map((a) => `${a.status} ${a.closed ? 'closed' : 'open'}`);
    expect(outcomes.filter((o) => o !== '401 closed')).toEqual([]);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    expect(s.budget.inFlight).toBe(0);
  }, 60_000);

  it('an allowed caller who stalls mid-body is cut off by the request timeout', async () => {
    s = await start({ requestTimeoutMs: 1000, headersTimeoutMs: 1000 });
    const answer = await stall(s.port, head('/api/v1/events/ns/', 1000, 'good-2'), '{"a":', 5000);
    expect(answer.closed).toBe(true);
    expect(answer.status).toBe(408);
    expect(answer.ms).toBeLessThan(3000);
    expect(s.budget.inFlight).toBe(0);
  });

  it('a caller who never finishes its headers is cut off by the headers timeout', async () => {
    s = await start({ headersTimeoutMs: 800, requestTimeoutMs: 1000 });
    const answer = await stall(s.port, 'POST /api/v1/events/ns/ HTTP/1.1\r\nHost: x\r\n', '', 5000);
    expect(answer.closed).toBe(true);
    expect(answer.ms).toBeLessThan(3000);
  });

  it('a connection that never sends a request is closed after the first-request timeout', async () => {
    s = await start({ firstRequestTimeoutMs: 600 });
    const answer = await stall(s.port, '', '', 5000);
    expect(answer).toMatchObject({ status: 0, closed: true });
    expect(answer.ms).toBeLessThan(3000);
    // A connection that did send one is kept alive between requests as usual (keepAliveTimeout).
    const served = await stall(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '', 5000, false);
    expect(served.status).toBe(200);
  });

  it('bodies in flight share a byte budget: beyond it 503 with Retry-After, before reading', async () => {
    s = await start({ maxBodiesInFlightBytes: 2 * MAX_BODY });
    const held = [
      stall(s.port, head('/api/v1/events/ns/', MAX_BODY, 'good-3'), '{', 1500),
      stall(s.port, head('/api/v1/workflows/ns', MAX_BODY, 'good-3'), '{', 1500),
    ];
    await new Promise((r) => setTimeout(r, 300));
    expect(s.budget.inFlight).toBe(2 * MAX_BODY);
    const third = await stall(s.port, head('/api/v1/events/ns/', 100, 'good-3'), '{');
    expect(third).toMatchObject({ status: 503, closed: true });
    expect(third.headers['retry-after']).toBe('1');
    await Promise.all(held);
    await new Promise((r) => setTimeout(r, 100));
    expect(s.budget.inFlight).toBe(0);
  });

  it('a client still writing a refused upload reads the refusal (no reset): the rest is discarded for a while', async () => {
    s = await start({ lingerMs: 2000 });
    const big = 'x'.repeat(3 * MAX_BODY);
    const noAuth = await fetch(`http://127.0.0.1:${s.port}/api/v1/workflows/ns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(noAuth.status).toBe(401);
    const tooBig = await fetch(`http://127.0.0.1:${s.port}/api/v1/events/ns/`, {
      method: 'POST',
      headers: { authorization: 'Bearer good-6' },
      body: big,
    });
    expect(tooBig.status).toBe(413);
    expect(s.budget.inFlight).toBe(0);
  });

  it('a declared body over the limit is 413 before reading', async () => {
    s = await start();
    const answer = await stall(s.port, head('/api/v1/workflows/ns', MAX_BODY + 1, 'good-4'), '{');
    expect(answer).toMatchObject({ status: 413, closed: true });
  });

  it('connections beyond the cap are closed at once', async () => {
    s = await start({ maxConnections: 5 });
    const sockets = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<Socket>((r) => {
            const c = connect({ port: s!.port, host: '127.0.0.1' }, () => r(c));
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    const extra = await stall(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '', 2000);
    expect(extra).toMatchObject({ status: 0, closed: true });
    for (const c of sockets) c.destroy();
  });
});

describe('tokens', () => {
  let s: Running | undefined;
  afterEach(async () => {
    await s?.app.close();
    s = undefined;
  });

  it('refuses a token over the size limit with a clear 401 and no access review', async () => {
    s = await start();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        stall(s!.port, head('/api/v1/events/ns/', 2, `${i}`.padEnd(MAX_TOKEN_BYTES + 1, 'x')), '{}', 3000, false),
      ),
    );
    expect(answers.every((a) => a.status === 401)).toBe(true);
    expect(JSON.parse(answers[0].body).message).toBe(
      `the bearer token is longer than ${MAX_TOKEN_BYTES} bytes, which no Kubernetes token is`,
    );
    expect(s.seen.reviews).toBe(0);
  }, 60_000);

  it('a flood of distinct bogus tokens makes a bounded number of reviews; the rest get 429 with Retry-After', async () => {
    s = await start({}, { unknownReviewBurst: 20, unknownReviewsPerSecond: 10 });
    const token = (i: number) => `bogus-${i}-`.padEnd(4096, 'y');
    const answers: Answer[] = [];
    const t0 = performance.now();
    for (let i = 0; i < 400; i += 50)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, j) => stall(s!.port, head('/api/v1/events/ns/', 2, token(i + j)), '{}', 3000, false)),
        )),
      );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((x) => x === 401).length).toBe(s.seen.reviews);
    // The bucket: a burst of 20, then 10 a second, however slow the machine made the flood.
    expect(s.seen.reviews).toBeLessThanOrEqual(20 + Math.ceil(((performance.now() - t0) / 1000) * 10));
    expect(s.seen.reviews).toBeLessThan(400);
    expect(statuses.filter((x) => x === 429).length).toBe(400 - s.seen.reviews);
    expect(answers.find((a) => a.status === 429)!.headers['retry-after']).toBe('1');
    // A token the API server allowed before keeps being served during the flood.
    const ok = await fetch(`http://127.0.0.1:${s.port}/api/v1/events/ns/`, {
      method: 'POST',
      headers: { authorization: 'Bearer good-5' },
      body: '{}',
    });
    expect([200, 429]).toContain(ok.status);
  }, 60_000);
});

/** A service-account-shaped token: a JWT header naming an algorithm, then `payload`, then a signature. */
const jwtLike = (payload: string) => `${Buffer.from('{"alg":"RS256","kid":"k"}').toString('base64url')}.${payload}.c2ln`;

/** POSTs an event from `localAddress` (another loopback address is another source). */
function postFrom(port: number, localAddress: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method: 'POST',
        path: '/api/v1/events/ns/',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end('{}');
  });
}

describe('token floods are limited by what distinguishes them (source, token shape)', () => {
  let s: Running | undefined;
  afterEach(async () => {
    await s?.app.close();
    s = undefined;
  });

  it('a flood of made-up tokens does not keep 20 new, valid service-account tokens at 429', async () => {
    s = await start({ maxConnectionsPerSource: 10_000 }); // one address floods on purpose: the per-source cap is tested on its own
    const bogus = (i: number) => `bogus-${i}-`.padEnd(1024, 'y');
    const results = await Promise.all([
      ...Array.from({ length: 600 }, (_, i) => postFrom(s!.port, '127.0.0.1', bogus(i))),
      ...Array.from({ length: 20 }, (_, i) => postFrom(s!.port, '127.0.0.1', jwtLike(`good${i}`))),
    ]);
    const flood = results.slice(0, 600);
    const valid = results.slice(600);
    expect(flood.filter((x) => x === 429).length).toBeGreaterThan(500);
    expect(valid).toEqual(Array(20).fill(200));
  }, 60_000);

  it('a flood of service-account-shaped fakes from one address leaves callers from another address served', async () => {
    s = await start({ maxConnectionsPerSource: 10_000 }); // one address floods on purpose: the per-source cap is tested on its own
    const results = await Promise.all([
      ...Array.from({ length: 600 }, (_, i) => postFrom(s!.port, '127.0.0.1', jwtLike(`fake${i}`))),
      ...Array.from({ length: 20 }, (_, i) => postFrom(s!.port, '127.0.0.2', jwtLike(`good${i}`))),
    ]);
    expect(results.slice(0, 600).filter((x) => x === 429).length).toBeGreaterThan(500);
    expect(results.slice(600)).toEqual(Array(20).fill(200));
  }, 60_000);

  it('tells the shapes and sources apart', () => {
    expect(tokenShape(jwtLike('x'))).toBe('jwt/short');
    expect(tokenShape('not.a.jwt!')).toBe('opaque/short');
    expect(tokenShape('x'.repeat(3000))).toBe('opaque/long');
    expect(sourceOf('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(sourceOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2');
    expect(sourceOf(undefined)).toBe('');
  });
});

describe('Authenticator', () => {
  let api: Awaited<ReturnType<typeof standIn>>;
  let kube: Awaited<ReturnType<typeof standIn>>['kube'];
  let seen: Awaited<ReturnType<typeof standIn>>['seen'];
  beforeAll(async () => {
    api = await standIn();
    ({ kube, seen } = api);
  });
  afterAll(() => api.close());

  it('keys its caches by the token hash and keeps them bounded', async () => {
    const auth = new Authenticator({ mode: 'client', kube, maxEntries: 100, unknownReviewBurst: 10_000, sourceReviewBurst: 10_000 });
    for (let i = 0; i < 1000; i++) await auth.require(auth.callerOf(`Bearer good-${i}`), 'ns', CREATE_WORKFLOW_ACCESS);
    const caches = auth as unknown as { reviews: { size: number; get(k: string): unknown }; known: { size: number } };
    expect(caches.reviews.size).toBe(100);
    expect(caches.known.size).toBe(100);
    const caller = auth.callerOf('Bearer good-999');
    expect(caller.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(caller.id).toBe(`token:${caller.hash.slice(0, 12)}`);
    const reviews = seen.reviews;
    await auth.require(caller, 'ns', CREATE_WORKFLOW_ACCESS); // cached
    expect(seen.reviews).toBe(reviews);
  });

  it('server mode refuses to start without a guard unless told it is unsafe', () => {
    expect(() => new Authenticator({ mode: 'server', kube })).toThrow(
      /--auth-mode=server .* needs a guard: give --server-token-file .* --unsafe-server-mode-without-auth/,
    );
    expect(new Authenticator({ mode: 'server', kube, unsafeServerModeWithoutAuth: true }).unguarded).toBe(true);
  });

  it('server mode with a token: only that token, only the allowed namespaces', async () => {
    const auth = new Authenticator({ mode: 'server', kube, serverToken: 's3cret-shared\n', allowedNamespaces: ['team-a'] });
    expect(() => auth.callerOf(undefined)).toThrow(/send the header "Authorization: Bearer <token>"/);
    expect(() => auth.callerOf('Bearer guess')).toThrow(/not this server's token/);
    const caller = auth.callerOf('Bearer s3cret-shared');
    expect(caller.id).toBe('server');
    await expect(auth.require(caller, 'team-a', CREATE_WORKFLOW_ACCESS)).resolves.toBeUndefined();
    await expect(auth.require(caller, 'kube-system', CREATE_WORKFLOW_ACCESS)).rejects.toThrow(
      /namespace "kube-system" is not served here: this server serves only "team-a"/,
    );
  });
});
