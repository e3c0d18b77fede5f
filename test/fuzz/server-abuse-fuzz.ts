/**
 * Slow, oversized and unauthenticated requests, and token floods, against the server process
 * (issue 10 items 4–6). Per round, with sizes drawn from the seed:
 *
 * - stalled uploads: sockets announcing up to 1 MiB − 1 byte, sending part of it and stalling,
 *   with no / a bogus / an oversized / the real token, on the REST create and the event endpoint;
 * - trickle: a body sent a few bytes at a time, with and without a token;
 * - many sockets: hundreds of idle connections opened at once from one address;
 * - token flood: thousands of distinct made-up tokens of up to 16 KB.
 *
 * Invariants: every request that is refused is answered (401/403/413/429/503 with a JSON message)
 * without waiting for its body; a trickled request with a token is answered or cut off by the
 * request timeout, never left hanging; one address never holds more connections than the
 * per-source cap; `/healthz`, asked from an address of its own, answers within 2 s while the abuse
 * is under way; the server's resident memory stays within 200 MB of where it started. The stalled
 * uploads come from a crowd of eight addresses, each under the per-source cap, so what they test
 * is the global budget and the refusals before the body, not the cap.
 */
import { connect, type Socket } from 'node:net';
import type { Prng } from '../soak/prng.js';
import { send } from './raw-http.js';
import { LIMIT_DEFAULTS } from '../../src/server/limits.js';
import { namesProblem, type Tally } from './tally.js';

export interface ServerAbuseTarget {
  port: number;
  /** A token the API server accepts (and may send events and create workflows in `namespace`). */
  token: string;
  namespace: string;
  /** The server's /metrics (its own port): resident memory is read there. */
  metricsUrl: string;
  alive: () => boolean;
}

const TARGET = 'server abuse: slow, oversized, unauthenticated, token floods';
const MAX_RSS_GROWTH = 200 * 1024 * 1024;

interface Held {
  status: number;
  body: string;
  /** ms to the first byte of the answer; undefined without one. */
  answeredMs?: number;
  closed: boolean;
  socket: Socket;
}

/** Writes `head` and `sent`, then stalls; resolves at the first answer byte (or close / `waitMs`). */
function hold(port: number, head: string, sent: Buffer | string, waitMs: number, localAddress?: string): Promise<Held> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    let settled = false;
    const settle = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({
        status,
        body: end < 0 ? '' : text.slice(end + 4),
        answeredMs: chunks.length ? performance.now() - t0 : undefined,
        closed,
        socket,
      });
    };
    const timer = setTimeout(() => settle(false), waitMs);
    socket.once('connect', () => socket.write(head + (typeof sent === 'string' ? sent : sent.toString('latin1'))));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(text.slice(end + 4)) >= Number(length[1])) settle(false);
    });
    socket.on('error', () => {});
    socket.on('close', () => settle(true));
  });
}

const head = (path: string, length: number, auth: string | undefined) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${auth ? `Authorization: ${auth}\r\n` : ''}\r\n`;

async function rss(url: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(url)).text();
    const m = /^process_resident_memory_bytes (\S+)$/m.exec(text);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** An honest client at an address of its own (the abuse comes from others, each held to its per-source caps). */
const HONEST = '127.0.0.2';
/** The addresses a crowd of stalled uploads comes from: each stays under the per-source connection cap. */
const crowd = (i: number) => `127.0.0.${10 + (i % 8)}`;

async function healthy(port: number): Promise<string | undefined> {
  const t0 = performance.now();
  const a = await send(
    port,
    {
      method: 'GET',
      path: '/healthz',
      headers: [
        ['Host', '127.0.0.1'],
        ['Connection', 'close'],
      ],
    },
    5000,
    HONEST,
  );
  const ms = performance.now() - t0;
  if (a.status !== 200) return `/healthz answered ${a.status || 'nothing'}${a.hung ? ' (hung)' : ''}`;
  if (ms > 2000) return `/healthz took ${Math.round(ms)} ms`;
  return undefined;
}

export async function fuzzServerAbuse(
  rng: Prng,
  target: ServerAbuseTarget,
  tally: Tally,
  per: number,
  log: (l: string) => void,
): Promise<void> {
  const t = tally.of(TARGET);
  const baseline = await rss(target.metricsUrl);
  if (baseline === undefined) tally.warn(TARGET, `no process_resident_memory_bytes at ${target.metricsUrl}: memory not checked`);
  let peak = baseline ?? 0;
  const rounds = Math.max(1, Math.ceil(per / 25));
  const judgeRefusal = (what: string, a: Held, expected: number[]) => {
    t.tried++;
    if (a.status === 0) return tally.fail(TARGET, `${what}: no answer${a.closed ? ' (closed)' : ' (hung)'} while the body was still owed`);
    if (!expected.includes(a.status)) return tally.fail(TARGET, `${what}: answered ${a.status}, expected ${expected.join('/')}`);
    if (!namesProblem(a.body))
      return tally.fail(TARGET, `${what}: ${a.status} without a JSON message naming the problem: ${a.body.slice(0, 120)}`);
    t.rejected++;
  };
  const checkpoint = async (when: string) => {
    const sick = await healthy(target.port);
    if (sick) tally.fail(TARGET, `${when}: ${sick}${target.alive() ? '' : '; the process is gone'}`);
    const now = await rss(target.metricsUrl);
    if (now !== undefined && baseline !== undefined) {
      peak = Math.max(peak, now);
      if (now - baseline > MAX_RSS_GROWTH)
        tally.fail(
          TARGET,
          `${when}: resident memory ${Math.round(now / 2 ** 20)} MiB, ${Math.round((now - baseline) / 2 ** 20)} MiB above the start`,
        );
    }
  };

  for (let round = 0; round < rounds && target.alive(); round++) {
    // 1. Stalled uploads without an acceptable caller: refused before the body, nothing held.
    const sockets = rng.int(50, 300);
    const auths = [undefined, 'Bearer not-a-real-token', `Bearer ${'z'.repeat(9000)}`, 'Basic YTpi', 'Bearer '];
    const stalls = await Promise.all(
      Array.from({ length: sockets }, (_, i) => {
        const path = rng.chance(0.5) ? `/api/v1/workflows/${target.namespace}` : `/api/v1/events/${target.namespace}/`;
        const auth = rng.pick(auths);
        const sent = Buffer.alloc(rng.int(0, 256 * 1024), 0x78);
        return hold(target.port, head(path, 1024 * 1024 - 1, auth), sent, 10_000, crowd(i)).then((a) => ({
          a,
          what: `stalled upload to ${path} with ${auth ? auth.slice(0, 20) : 'no Authorization'}`,
        }));
      }),
    );
    await checkpoint(`round ${round}: while ${sockets} refused uploads stall`);
    for (const { a, what } of stalls) {
      judgeRefusal(what, a, [401, 429]);
      a.socket.destroy();
    }

    // 2. Stalled uploads WITH the token: the body is awaited, within the byte budget; /healthz stays prompt.
    const owed = await Promise.all(
      Array.from({ length: rng.int(5, 40) }, () =>
        hold(
          target.port,
          head(`/api/v1/events/${target.namespace}/`, 1024 * 1024 - 1, `Bearer ${target.token}`),
          Buffer.alloc(rng.int(1, 64 * 1024), 0x20),
          1500,
          '127.0.0.20',
        ),
      ),
    );
    await checkpoint(`round ${round}: while ${owed.length} authenticated uploads stall`);
    for (const a of owed) {
      t.tried++;
      // Nothing yet (waiting for the body) or 503 when the budget is full: both fine, nothing else.
      if (a.status !== 0 && a.status !== 503)
        tally.fail(TARGET, `authenticated stalled upload answered ${a.status} before its body arrived`);
      else t.accepted++;
      a.socket.destroy();
    }

    // 3. Trickle: a small event a few bytes at a time, with and without the token.
    for (const auth of [`Bearer ${target.token}`, undefined]) {
      const body = Buffer.from(JSON.stringify({ fuzz: 'trickle', n: rng.int(0, 1e6) }));
      const a = await send(
        target.port,
        {
          method: 'POST',
          path: `/api/v1/events/${target.namespace}/`,
          headers: [
            ['Host', '127.0.0.1'],
            ['Connection', 'close'],
            ['Content-Type', 'application/json'],
            ['Content-Length', String(body.length)],
            ...(auth ? [['Authorization', auth] as [string, string]] : []),
          ],
          body,
          trickleMs: rng.int(20, 120),
        },
        40_000,
      );
      t.tried++;
      if (a.hung || a.status === 0)
        tally.fail(TARGET, `trickled event ${auth ? 'with' : 'without'} a token: ${a.hung ? 'hung' : 'no answer'}`);
      else if (auth ? ![200, 408, 503].includes(a.status) : a.status !== 401)
        tally.fail(TARGET, `trickled event ${auth ? 'with' : 'without'} a token answered ${a.status}`);
      else t.accepted++;
    }

    // 4. Many idle sockets at once from one address: the server keeps at most its per-source cap
    // of them (closing the rest at once) and still answers everyone else.
    const idle = await Promise.all(
      Array.from(
        { length: rng.int(100, 800) },
        () =>
          new Promise<Socket>((r) => {
            const c = connect({ port: target.port, host: '127.0.0.1' }, () => r(c));
            c.on('error', () => r(c));
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 500));
    const kept = idle.filter((c) => !c.closed && !c.destroyed && c.readyState === 'open').length;
    t.tried++;
    if (kept > LIMIT_DEFAULTS.maxConnectionsPerSource)
      tally.fail(
        TARGET,
        `round ${round}: ${kept} idle sockets from one address kept open, over the per-source cap of ${LIMIT_DEFAULTS.maxConnectionsPerSource}`,
      );
    else t.rejected++;
    await checkpoint(`round ${round}: with ${idle.length} idle sockets opened from one address (${kept} kept)`);
    for (const c of idle) c.destroy();
    t.tried++;

    // 5. Token flood: distinct made-up tokens (up to 16 KB): 401 (or 429 once reviews are rate-limited), fast.
    const flood = rng.int(200, 2000);
    let refused = 0;
    for (let i = 0; i < flood; i += 100) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(100, flood - i) }, (_, j) =>
          send(
            target.port,
            {
              method: 'POST',
              path: `/api/v1/events/${target.namespace}/`,
              headers: [
                ['Host', '127.0.0.1'],
                ['Connection', 'close'],
                ['Authorization', `Bearer flood-${round}-${i + j}-${'q'.repeat(rng.int(10, 16_000))}`],
                ['Content-Length', '2'],
              ],
              body: Buffer.from('{}'),
            },
            10_000,
            '127.0.0.30',
          ),
        ),
      );
      for (const a of answers) {
        t.tried++;
        if (a.status === 401 || a.status === 429) {
          refused++;
          t.rejected++;
        } else if (a.status === 431)
          t.rejected++; // the header is larger than node's header limit
        else tally.fail(TARGET, `flood token answered ${a.status || (a.hung ? 'nothing (hung)' : 'nothing')}`);
      }
    }
    await checkpoint(`round ${round}: after ${flood} made-up tokens`);
    log(
      `  server abuse: round ${round + 1}/${rounds}: ${sockets} refused stalls, ${owed.length} owed uploads, ${idle.length} idle sockets, ${refused}/${flood} flood tokens refused`,
    );
  }
  if (baseline !== undefined)
    log(`  server abuse: resident memory ${Math.round(baseline / 2 ** 20)} MiB at the start, peak ${Math.round(peak / 2 ** 20)} MiB`);
}
