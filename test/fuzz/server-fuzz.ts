/**
 * Fuzz of every endpoint of the server (a `plugflow server` child process): malformed and hostile
 * bodies (JSON of every type, deep nesting, huge bodies, odd encodings), header tricks (two
 * Content-Lengths, Content-Length with chunked, bad chunks, huge and odd headers, bad
 * Authorization), path and query tricks, and odd methods — all sent by hand over TCP.
 *
 * Every answer must be: 2xx (accepted), 503 (a full queue), or a 4xx whose JSON body names the
 * problem. A hang, a close without an answer, any other 5xx, or a 4xx that says nothing is a
 * failure of that input. After every batch the server must still answer /healthz.
 */
import { buildWorkflow } from '../soak/designs.js';
import type { Prng } from '../soak/prng.js';
import { deepJson, hostileString, jsonValue, mutate, oddBody, short } from './generators.js';
import { send, type RawRequest, type RawResponse } from './raw-http.js';
import { namesProblem, type Tally } from './tally.js';

export interface ServerFuzzTarget {
  port: number;
  token: string;
  /** Namespace the fuzz may write to (no pod runner serves it). */
  namespace: string;
  /** Whether the server process is still running. */
  alive: () => boolean;
}

interface Input {
  target: string;
  label: string;
  req: RawRequest;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
/** Percent-encodes every byte of the UTF-8 form (lone surrogates included, as U+FFFD). */
const percent = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** A request as common clients send it (keep-alive: the server must read or skip the body). */
function request(method: string, path: string, token: string | undefined, body?: Buffer, extra: [string, string][] = []): RawRequest {
  const headers: [string, string][] = [['Host', '127.0.0.1']];
  if (token) headers.push(['Authorization', `Bearer ${token}`]);
  if (body) headers.push(['Content-Type', 'application/json'], ['Content-Length', String(body.length)]);
  return { method, path, headers: [...headers, ...extra], ...(body ? { body } : {}) };
}

/** A body for the event endpoint or the REST create, hostile in one of many ways. */
function hostileBody(rng: Prng, valid: unknown): { label: string; body: Buffer } {
  switch (rng.int(0, 7)) {
    case 0:
      return { label: 'random JSON', body: json(jsonValue(rng, 5)) };
    case 1: {
      const depth = rng.pick([1000, 10_000, 100_000, 400_000]);
      return { label: `nesting ${depth} deep`, body: Buffer.from(deepJson(depth, rng.chance(0.5) ? 'array' : 'object')) };
    }
    case 2: {
      const size = rng.pick([1024 * 1024 + 1, 2 * 1024 * 1024, 8 * 1024 * 1024]);
      return { label: `${size} bytes`, body: Buffer.from(JSON.stringify({ pad: 'x'.repeat(size) })) };
    }
    case 3: {
      const m = mutate(rng, valid);
      return { label: `mutated: ${m.changes.join('; ')}`, body: json(m.value) };
    }
    case 4:
      return { label: 'odd bytes/encoding', body: oddBody(rng, JSON.stringify(valid)) };
    case 5:
      return { label: 'empty', body: Buffer.alloc(0) };
    case 6:
      return { label: 'hostile string', body: json(hostileString(rng)) };
    default:
      return { label: 'valid', body: json(valid) };
  }
}

/** Header and framing tricks around a body (the path and token stay valid). */
function trick(rng: Prng, method: string, path: string, token: string, body: Buffer): { label: string; req: RawRequest } {
  const base: [string, string][] = [
    ['Host', '127.0.0.1'],
    ['Connection', 'close'],
    ['Authorization', `Bearer ${token}`],
  ];
  switch (rng.int(0, 16)) {
    case 0:
      return {
        label: 'two different Content-Lengths',
        req: {
          method,
          path,
          headers: [...base, ['Content-Length', String(body.length)], ['Content-Length', String(body.length + 5)]],
          body,
        },
      };
    case 1:
      return {
        label: 'Content-Length and chunked',
        req: {
          method,
          path,
          headers: [...base, ['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked']],
          body: Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]),
        },
      };
    case 2:
      return {
        label: 'bad chunk size',
        req: { method, path, headers: [...base, ['Transfer-Encoding', 'chunked']], body: Buffer.from('zz\r\nabc\r\n0\r\n\r\n') },
      };
    case 3:
      return {
        label: 'chunked, valid',
        req: {
          method,
          path,
          headers: [...base, ['Content-Type', 'application/json'], ['Transfer-Encoding', 'chunked']],
          body: Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]),
        },
      };
    case 4:
      return {
        label: '20 KB header value',
        req: { method, path, headers: [...base, ['X-Big', 'v'.repeat(20_000)], ['Content-Length', String(body.length)]], body },
      };
    case 5:
      return {
        label: '1500 x- headers',
        req: {
          method,
          path,
          headers: [
            ...base,
            ...Array.from({ length: 1500 }, (_, i): [string, string] => [`X-H${i}`, String(i)]),
            ['Content-Length', String(body.length)],
          ],
          body,
        },
      };
    case 6: {
      const auth = rng.pick([
        'Bearer',
        'Bearer ',
        `Bearer ${'a'.repeat(8000)}`,
        'Basic YWRtaW46YWRtaW4=',
        `bearer ${token}`,
        `Bearer ${token} extra`,
        'Bearer \u00ff\u00fe',
        `Bearer ${token}\t`,
      ]);
      return {
        label: `Authorization ${short(auth)}`,
        req: {
          method,
          path,
          headers: [
            ['Host', '127.0.0.1'],
            ['Connection', 'close'],
            ['Authorization', auth],
            ['Content-Length', String(body.length)],
          ],
          body,
        },
      };
    }
    case 7:
      return {
        label: 'two Authorization headers',
        req: { method, path, headers: [...base, ['Authorization', 'Bearer nope'], ['Content-Length', String(body.length)]], body },
      };
    case 8: {
      const ct = rng.pick([
        'application/json; charset=utf-16',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        '',
        'application/json; charset=nope',
        '*/*',
      ]);
      return {
        label: `Content-Type ${JSON.stringify(ct)}`,
        req: { method, path, headers: [...base, ['Content-Type', ct], ['Content-Length', String(body.length)]], body },
      };
    }
    case 9:
      return {
        label: 'Content-Encoding gzip on a plain body',
        req: {
          method,
          path,
          headers: [...base, ['Content-Type', 'application/json'], ['Content-Encoding', 'gzip'], ['Content-Length', String(body.length)]],
          body,
        },
      };
    case 10:
      return {
        label: 'no Host header',
        req: { method, path, headers: base.filter(([k]) => k !== 'Host').concat([['Content-Length', String(body.length)]]), body },
      };
    case 11:
      return {
        label: 'bad header name',
        req: { method, path, headers: [...base, ['X Bad(name)', 'v'], ['Content-Length', String(body.length)]], body },
      };
    case 12:
      return {
        label: 'LF-only line ends',
        req: {
          method,
          path,
          headers: [],
          raw: Buffer.concat([
            Buffer.from(
              `${method} ${path} HTTP/1.1\nHost: 127.0.0.1\nConnection: close\nAuthorization: Bearer ${token}\nContent-Length: ${body.length}\n\n`,
            ),
            body,
          ]),
        },
      };
    case 13:
      return {
        label: 'Content-Length larger than the body, then end of stream',
        req: { method, path, headers: [...base, ['Content-Length', String(body.length + 100)]], body, endAfterWrite: true },
      };
    case 14:
      return {
        label: 'slow trickle',
        req: {
          method,
          path,
          headers: [...base, ['Content-Type', 'application/json'], ['Content-Length', String(Math.min(body.length, 200))]],
          body: body.subarray(0, 200),
          trickleMs: 20,
        },
      };
    case 15:
      return {
        label: 'Expect: 100-continue',
        req: {
          method,
          path,
          headers: [...base, ['Expect', '100-continue'], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)]],
          body,
        },
      };
    default:
      return { label: 'negative Content-Length', req: { method, path, headers: [...base, ['Content-Length', '-1']], body } };
  }
}

const ODD_PATHS = [
  (ns: string) => `/api/v1/events/${ns}`,
  (ns: string) => `/api/v1/events/${ns}/a/b`,
  () => '/api/v1/events/%zz/',
  () => `/api/v1/events/${'n'.repeat(300)}/`,
  () => '/api/v1/events/UPPER/',
  () => '/api/v1/events/..%2f..%2fkube-system/',
  (ns: string) => `/api/v1/events/${ns}/%F0%9F%98%80`,
  (ns: string) => `/api/v1/events/${ns}/?x=${'y'.repeat(5000)}`,
  () => '/api/v1/workflows/',
  (ns: string) => `/api/v1/workflows/${ns}/a/b/c`,
  (ns: string) => `/api/v1/workflows/${ns}/%00`,
  (ns: string) => `/api/v1/workflows/${ns}/${'x'.repeat(600)}`,
  (ns: string) => `/api/v1/workflows/${ns}/..%2F..%2Fsecrets`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.limit=-1`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.limit=abc`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.labelSelector=!!!%3D%3D`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.fieldSelector=spec.x%3Dy`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.continue=garbage`,
  (ns: string) => `/api/v1/workflows/${ns}?listOptions.limit=1&listOptions.limit=2`,
  () => `/${'a/'.repeat(2000)}`,
  () => '/healthz?x=%',
  () => '/metrics/../healthz',
  () => '*',
  () => 'http://evil.example/api/v1/workflows/x',
];

function inputs(rng: Prng, t: ServerFuzzTarget, per: number): Input[] {
  const ns = t.namespace;
  const out: Input[] = [];
  const event = { repository: 'plugflow', commits: [{ id: 'a1' }], ref: 'refs/heads/main' };
  for (let i = 0; i < per; i++) {
    const b = hostileBody(rng, event);
    const disc = rng.chance(0.7) ? '' : percent(hostileString(rng).slice(0, 100));
    out.push({
      target: 'POST /api/v1/events/{ns}/{discriminator}: bodies',
      label: b.label,
      req: request('POST', `/api/v1/events/${ns}/${disc}`, t.token, b.body, [['X-Fuzz', String(i)]]),
    });
    const tr = trick(rng, 'POST', `/api/v1/events/${ns}/`, t.token, Buffer.from(JSON.stringify(event)));
    out.push({ target: 'POST /api/v1/events/{ns}/{discriminator}: headers and framing', label: tr.label, req: tr.req });
  }
  for (let i = 0; i < per; i++) {
    const valid = { namespace: ns, workflow: buildWorkflow('container', `fz-${i}-${rng.int(0, 1e9).toString(36)}`) };
    const b = hostileBody(rng, rng.chance(0.5) ? valid : valid.workflow);
    out.push({
      target: 'POST /api/v1/workflows/{ns}: bodies',
      label: b.label,
      req: request('POST', `/api/v1/workflows/${ns}`, t.token, b.body),
    });
    const m = mutate(rng, valid.workflow, rng.int(1, 4));
    out.push({
      target: 'POST /api/v1/workflows/{ns}: malformed workflows',
      label: m.changes.join('; '),
      req: request('POST', `/api/v1/workflows/${ns}`, t.token, json({ namespace: ns, serverDryRun: rng.chance(0.3), workflow: m.value })),
    });
    const tr = trick(
      rng,
      'POST',
      `/api/v1/workflows/${ns}`,
      t.token,
      json({ namespace: ns, serverDryRun: true, workflow: valid.workflow }),
    );
    out.push({ target: 'POST /api/v1/workflows/{ns}: headers and framing', label: tr.label, req: tr.req });
  }
  for (let i = 0; i < per; i++) {
    const p = rng.pick(ODD_PATHS)(ns);
    const method = rng.pick(['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND']);
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? json(jsonValue(rng, 3)) : undefined;
    out.push({
      target: 'paths, queries and methods',
      label: `${method} ${short(p)}`,
      req: request(method, p, rng.chance(0.9) ? t.token : undefined, body),
    });
    const name = rng.pick(['does-not-exist', 'x'.repeat(253), 'UPPER', 'a..b', '-x-', percent('ü'), '%2e%2e']);
    const m = rng.pick(['GET', 'DELETE']);
    out.push({
      target: 'GET/DELETE /api/v1/workflows/{ns}/{name}',
      label: `${m} ${short(name)}`,
      req: request(m, `/api/v1/workflows/${ns}/${name}`, t.token),
    });
  }
  for (let i = 0; i < Math.ceil(per / 4); i++) {
    const raw = rng.pick([
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'GET /healthz HTTP/1.0\r\n\r\n',
      'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
      'GARBAGE\r\n\r\n',
      '\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /healthz\r\n\r\n',
      `GET /${'x'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      'POST /api/v1/events/x/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Inject: a\rb\r\n\r\n',
      '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003', // a TLS ClientHello on plain HTTP
    ]);
    out.push({
      target: 'raw protocol garbage',
      label: short(raw),
      req: { method: '', path: '', headers: [], raw: Buffer.from(raw, 'latin1') },
    });
  }
  return out;
}

function judge(tally: Tally, input: Input, res: RawResponse): void {
  const t = tally.of(input.target);
  t.tried++;
  const what = `${input.label} → `;
  if (res.hung) return tally.fail(input.target, `${what}no answer within 15 s`);
  if (res.status === 0) {
    // The server closed without a status line. Acceptable only for bytes that are not HTTP/1.x
    // at all, or a request whose body ended early (there is no whole request to answer).
    if (input.target === 'raw protocol garbage' || input.req.endAfterWrite) return void t.rejected++;
    // A body over the server's limit: the server answers 413 early and closes while the client
    // is still sending, and the client's kernel may reset the connection before the answer is
    // read. A timing race of TCP, not of the contract; counted and reported, not failed.
    if ((input.req.body?.length ?? 0) > 1024 * 1024 && /EPIPE|ECONNRESET/.test(res.error ?? '')) {
      t.rejected++;
      return tally.warn(input.target, `${what}connection reset before the 413 could be read (${res.error})`);
    }
    return tally.fail(input.target, `${what}connection closed without an answer${res.error ? ` (${res.error})` : ''}`);
  }
  if (res.status < 300 || res.status === 304) return void t.accepted++;
  if (res.status === 503) return void t.rejected++;
  if (res.status >= 500) return tally.fail(input.target, `${what}${res.status}: ${res.body.slice(0, 200)}`);
  const named = namesProblem(res.body);
  if (!named && input.req.method !== 'HEAD')
    return tally.fail(
      input.target,
      `${what}${res.status} without a message naming the problem (body ${JSON.stringify(res.body.slice(0, 120))})`,
    );
  t.rejected++;
}

export async function fuzzServer(rng: Prng, target: ServerFuzzTarget, tally: Tally, per: number, log: (l: string) => void): Promise<void> {
  const all = inputs(rng, target, per);
  const batch = 16;
  const slow: [number, string][] = [];
  for (let i = 0; i < all.length; i += batch) {
    const slice = all.slice(i, i + batch);
    const answers = await Promise.all(
      slice.map(async (x) => {
        const t0 = performance.now();
        const a = await send(target.port, x.req);
        slow.push([performance.now() - t0, `${x.target}: ${x.label} → ${a.status || 'none'}`]);
        return a;
      }),
    );
    slice.forEach((x, j) => judge(tally, x, answers[j]!));
    const health = await send(target.port, request('GET', '/healthz', undefined));
    if (health.status !== 200 || !target.alive()) {
      tally.fail(
        'server liveness',
        `after inputs ${i}–${i + batch - 1} (${slice
          .map((x) => x.label)
          .join(' | ')
          .slice(0, 300)}): /healthz answered ${health.status || 'nothing'}${target.alive() ? '' : '; the process is gone'}`,
      );
      if (!target.alive()) return;
    }
    if ((i / batch) % 25 === 0) log(`  server: ${i + slice.length}/${all.length} inputs`);
  }
  tally.of('server liveness').tried += Math.ceil(all.length / batch);
  slow.sort((a, b) => b[0] - a[0]);
  log(
    `  server: slowest answers: ${slow
      .slice(0, 6)
      .map(([ms, l]) => `${(ms / 1000).toFixed(1)} s ${l.slice(0, 120)}`)
      .join(' | ')}`,
  );
}
