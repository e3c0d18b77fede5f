/**
 * Event endpoint figures, for each way of running it, side by side in one run:
 *
 * - `async`: today's in-memory queue (`--event-dispatch=async`): 200 at once, not durable;
 * - `sync`: the embedded default: 200 once the workflows exist (measured with a binding that
 *   matches every event, so each accepted event is a workflow created);
 * - `bus`: NATS JetStream, three nodes on this machine, stream replicated three times: 200 once
 *   a quorum stored the event (measured in a namespace without bindings: accepting does not
 *   depend on them; the consumer drains the stream meanwhile).
 *
 * 1. Accepted events per second and p50/p99 reply latency, against a bare `node:http` server that
 *    reads the same POST, parses the JSON and answers `{}`, in alternating rounds (the ratio of
 *    each pair; the median is the figure). Each server runs in its own child process, the load
 *    generator (undici, 32 connections) in this one; plain HTTP; client auth mode when the
 *    kubeconfig has a token (the access review answered from the cache before the body is read).
 * 2. Event-to-workflow-created latency at a steady 100 events/s for 10 s, per mode: each event
 *    carries its number, a watch on workflows sees each one created; latency = watch ADDED − send.
 *
 * Run: npx tsx bench/server-bench.ts   (starts its own control plane, or uses $KUBECONFIG; builds
 * nats-server into the cache when needed)
 * Node flags for the server children, e.g. to profile them: BENCH_CHILD_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
 * The server children run under tsx, like the bench; compiled JavaScript (dist/) is a little faster.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { GROUP, PLURAL, VERSION } from '../src/api/index.js';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { createLogger } from '../src/log/logger.js';
import { startServer } from '../src/server/server.js';
import { envelopeKey } from '../src/server/event-envelope.js';
import { startNatsCluster } from '../src/devenv/nats-cluster.js';
import type { BusConnection } from '../src/server/event-bus-connection.js';
import { printFigures, type Figure } from './figures.js';
import { applyCrds } from '../test/support/apply.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BODY = JSON.stringify({ bench: false, repository: 'plugflow', commits: [{ id: 'a1b2c3', author: 'ann' }], ref: 'refs/heads/main' });

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const round = (x: number, d = 2) => Number(x.toFixed(d));

// ---------------------------------------------------------------- child processes (the servers)

async function child(kind: string, kubeconfig?: string): Promise<void> {
  if (kind === 'bare') {
    const srv = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/cpu') {
        const u = process.cpuUsage();
        return res.end(JSON.stringify({ seconds: (u.user + u.system) / 1e6 }));
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          JSON.parse(Buffer.concat(chunks).toString('utf8'));
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' });
          res.end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    srv.keepAliveTimeout = 60_000;
    process.once('SIGTERM', () => srv.close(() => process.exit(0)));
    srv.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}` })));
    return;
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig!);
  const mode = process.env.BENCH_EVENT_MODE ?? 'sync';
  const server = await startServer({
    kubeConfig: kc,
    port: 0,
    host: '127.0.0.1',
    secure: false,
    ...(mode === 'bus'
      ? {
          eventBus: {
            ...(JSON.parse(process.env.BENCH_NATS_CONNECTION!) as BusConnection),
            key: envelopeKey(process.env.BENCH_BUS_KEY!),
            stream: process.env.BENCH_BUS_STREAM!,
          },
        }
      : { eventDispatch: mode as 'async' | 'sync' }),
    authMode: kc.getCurrentUser()?.token ? 'client' : 'server',
    unsafeServerModeWithoutAuth: true,
    logger: createLogger('server', 'warn'),
  });
  console.log(JSON.stringify({ url: server.url, metricsUrl: server.metricsUrl }));
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

function spawnChild(
  kind: string,
  kubeconfig?: string,
  env: Record<string, string> = {},
): Promise<{ proc: ChildProcess; url: string; metricsUrl?: string }> {
  const proc = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CHILD_FLAGS ? process.env.BENCH_CHILD_FLAGS.split(' ') : []),
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      kind,
      ...(kubeconfig ? [kubeconfig] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: ROOT,
      env: { ...process.env, ...env },
    },
  );
  return new Promise((resolvePromise, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolvePromise({ proc, ...(JSON.parse(line) as { url: string; metricsUrl?: string }) });
    });
    proc.on('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

async function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

// ---------------------------------------------------------------- load generation

/** Keeps `connections` requests in flight against one server; `measure` runs one timed round. */
class Load {
  private readonly pool: Pool;
  private readonly headers: Record<string, string> = { 'content-type': 'application/json', 'x-event-type': 'push' };
  readonly rates: number[] = [];
  readonly latencies: number[] = [];
  ok = 0;
  other = 0;

  constructor(
    url: string,
    private readonly path: string,
    token: string | undefined,
    private readonly connections = 32,
  ) {
    this.pool = new Pool(url, { connections, pipelining: 1 });
    if (token) this.headers.authorization = `Bearer ${token}`;
  }

  async measure(ms: number, record = true): Promise<void> {
    let ok = 0;
    const end = performance.now() + ms;
    const worker = async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await this.pool.request({ path: this.path, method: 'POST', headers: this.headers, body: BODY });
        await res.body.text();
        if (record) this.latencies.push(performance.now() - t0);
        if (res.statusCode === 200) ok++;
        else if (record) this.other++;
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: this.connections }, worker));
    if (!record) return;
    this.ok += ok;
    this.rates.push(ok / ((performance.now() - t0) / 1000));
  }

  summary() {
    const lat = [...this.latencies].sort((a, b) => a - b);
    const rates = [...this.rates].sort((a, b) => a - b);
    return {
      perSecond: percentile(rates, 50),
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      rounds: this.rates.map((r) => Math.round(r)),
    };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Server CPU seconds so far: the bare server's /cpu, or our /metrics (own port) process_cpu_seconds_total. */
async function cpuSeconds(url: string, bare: boolean): Promise<number> {
  const res = await request(bare ? `${url}/cpu` : url);
  const text = await res.body.text();
  if (bare) return (JSON.parse(text) as { seconds: number }).seconds;
  const m = /^process_cpu_seconds_total (\S+)$/m.exec(text);
  if (!m) throw new Error('no process_cpu_seconds_total in /metrics');
  return Number(m[1]);
}

// ---------------------------------------------------------------- event → workflow latency

async function eventToWorkflow(kc: KubeConfig, url: string, token: string | undefined, ns: string, rate = 100, seconds = 10) {
  const total = rate * seconds;
  const sentAt = new Map<number, number>();
  const seenAt = new Map<number, number>();
  let allSeen!: () => void;
  const done = new Promise<void>((r) => (allSeen = r));
  // Reconnects: right after CRDs are created the API server answers watches 429 for a while.
  let watch: AbortController | undefined;
  let watching = true;
  const open = async (): Promise<void> => {
    watch = await new Watch(kc).watch(
      `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL.workflow}`,
      {},
      (type: string, obj: { spec?: { arguments?: { parameters?: { value?: string }[] } } }) => {
        if (type !== 'ADDED') return;
        const n = Number(obj.spec?.arguments?.parameters?.[0]?.value);
        if (!seenAt.has(n)) seenAt.set(n, performance.now());
        if (seenAt.size >= total) allSeen();
      },
      () => {
        if (watching) setTimeout(() => void open(), 200);
      },
    );
  };
  await open();
  // A sentinel workflow seen through the watch shows it is live (events sent before would be missed).
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL.workflow,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Workflow',
      metadata: { name: 'sentinel' },
      spec: { workflowTemplateRef: { name: 'bench' }, arguments: { parameters: [{ name: 'n', value: '-1' }] } },
    },
  });
  const deadline = Date.now() + 60_000;
  while (!seenAt.has(-1)) {
    if (Date.now() > deadline) throw new Error('the workflow watch did not connect within 60 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  seenAt.delete(-1);
  const pool = new Pool(url, { connections: 16 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let rejected = 0;
  const start = performance.now() + 100;
  const sends: Promise<void>[] = [];
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sentAt.set(n, performance.now());
    sends.push(
      pool
        .request({ path: `/api/v1/events/${ns}/`, method: 'POST', headers, body: JSON.stringify({ bench: true, n }) })
        .then(async (res) => {
          await res.body.text();
          if (res.statusCode !== 200) rejected++;
        }),
    );
  }
  await Promise.all(sends);
  const actualRate = total / ((performance.now() - start) / 1000);
  await Promise.race([done, new Promise((r) => setTimeout(r, 30_000))]);
  watching = false;
  watch?.abort();
  await pool.close();
  const lat = [...seenAt.entries()].map(([n, t]) => t - sentAt.get(n)!).sort((a, b) => a - b);
  return {
    created: seenAt.size,
    total,
    rejected,
    actualRate,
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    max: lat[lat.length - 1] ?? NaN,
  };
}

// ---------------------------------------------------------------- main

/** One way of running the event endpoint (see the header). */
interface Mode {
  mode: 'async' | 'sync' | 'bus';
  label: string;
}

const MODES: Mode[] = [
  { mode: 'async', label: "in-memory queue (--event-dispatch=async, not durable: today's before this release)" },
  { mode: 'sync', label: 'embedded default (sync: 200 once the workflow exists)' },
  { mode: 'bus', label: 'JetStream bus (3 nodes, R3: 200 once a quorum stored it)' },
];

export async function runServerBench(): Promise<Figure[]> {
  let plane: ControlPlane | undefined;
  let kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) {
    plane = new ControlPlane({ log: (l) => console.log(l) });
    await plane.start();
    kubeconfig = plane.kubeconfigPath;
    await applyCrds(kubeconfig);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const token = kc.getCurrentUser()?.token;
  const core = kc.makeApiClient(CoreV1Api);
  const objects = kc.makeApiClient(CustomObjectsApi);
  const suffix = randomBytes(3).toString('hex');
  const emptyNs = `bench-empty-${suffix}`;
  const matchNs = `bench-match-${suffix}`;
  const latencyNs = (m: string) => `bench-latency-${m}-${suffix}`;
  const namespaces = [emptyNs, matchNs, ...MODES.map((m) => latencyNs(m.mode))];
  for (const name of namespaces) await core.createNamespace({ body: { metadata: { name } } });
  const create = (namespace: string, plural: string, body: object) =>
    objects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural,
      body: { apiVersion: `${GROUP}/${VERSION}`, ...body },
    });
  for (const ns of [matchNs, ...MODES.map((m) => latencyNs(m.mode))]) {
    await create(ns, PLURAL.workflowTemplate, {
      kind: 'WorkflowTemplate',
      metadata: { name: 'bench' },
      spec: {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'n' }] },
        templates: [{ name: 'main', container: { image: 'busybox', command: ['true'] } }],
      },
    });
    await create(ns, PLURAL.workflowEventBinding, {
      kind: 'WorkflowEventBinding',
      metadata: { name: 'bench' },
      spec: {
        // In matchNs every event matches (the throughput events carry no number: n is "x").
        event: { selector: ns === matchNs ? 'true' : 'payload.bench == true' },
        submit: {
          workflowTemplateRef: { name: 'bench' },
          arguments: { parameters: [{ name: 'n', valueFrom: { event: ns === matchNs ? '"x"' : 'payload.n' } }] },
        },
      },
    });
  }
  // The child reads the kubeconfig from a file of its own (KUBECONFIG may hold several paths).
  const childConfig = join(tmpdir(), `plugflow-bench-${suffix}.kubeconfig`);
  writeFileSync(childConfig, kc.exportConfig(), { mode: 0o600 });
  const nats = await startNatsCluster({ log: (l) => console.log(l) });
  const busEnv = {
    BENCH_NATS_CONNECTION: JSON.stringify(nats.connection),
    BENCH_BUS_KEY: randomBytes(32).toString('hex'),
    BENCH_BUS_STREAM: `BENCH_${suffix.toUpperCase()}`,
  };

  const figures: Figure[] = [];
  const authMode = token ? 'client auth mode' : 'server auth mode';
  const bare = await spawnChild('bare');
  try {
    // BENCH_MODES=bus (comma-separated) measures only those modes, e.g. to profile one.
    const only = process.env.BENCH_MODES?.split(',');
    for (const m of MODES.filter((x) => !only || only.includes(x.mode))) {
      console.log(`\n[server-bench] mode ${m.mode}: ${m.label}`);
      const ours = await spawnChild('plugflow', childConfig, { BENCH_EVENT_MODE: m.mode, ...(m.mode === 'bus' ? busEnv : {}) });
      try {
        // Both servers run side by side; rounds alternate so that noise on a shared machine hits both.
        const bareLoad = new Load(bare.url, '/api/v1/events/x/', undefined);
        const ourLoad = new Load(ours.url, `/api/v1/events/${m.mode === 'sync' ? matchNs : emptyNs}/`, token);
        await bareLoad.measure(2000, false); // warm-up: JIT, connections, the token review cache
        await ourLoad.measure(3000, false);
        const cpu = { bare: 0, ours: 0 };
        const ratios: number[] = [];
        for (let round = 0; round < 5; round++) {
          let c0 = await cpuSeconds(bare.url, true);
          await bareLoad.measure(2000);
          cpu.bare += (await cpuSeconds(bare.url, true)) - c0;
          c0 = await cpuSeconds(ours.metricsUrl!, false);
          await ourLoad.measure(2000);
          cpu.ours += (await cpuSeconds(ours.metricsUrl!, false)) - c0;
          ratios.push(ourLoad.rates[round]! / bareLoad.rates[round]!);
        }
        await Promise.all([bareLoad.close(), ourLoad.close()]);
        const b = bareLoad.summary();
        const o = ourLoad.summary();
        const ratio = percentile(
          [...ratios].sort((x, y) => x - y),
          50,
        );
        const cpuPerRequest = { bare: (cpu.bare / bareLoad.ok) * 1e6, ours: (cpu.ours / ourLoad.ok) * 1e6 };
        const lag = await eventToWorkflow(kc, ours.url, token, latencyNs(m.mode));
        const busGoal = m.mode === 'bus';
        figures.push(
          {
            name: `${m.label}: accepted events/s (median of 5 rounds)`,
            value: Math.round(o.perSecond),
            unit: 'events/s',
            goal: busGoal ? '≥ 5000, all accepted' : 'reported, all accepted',
            met: ourLoad.other === 0 && (!busGoal || o.perSecond >= 5000),
            note: `${authMode}, 32 connections, rounds ${o.rounds.join('/')}, ${ourLoad.ok} accepted, ${ourLoad.other} not 200${m.mode === 'sync' ? '; every event creates a workflow' : ''}`,
          },
          {
            name: `${m.mode}: accepted events/s ÷ bare node:http (median of 5 paired rounds)`,
            value: round(ratio),
            unit: 'x',
            goal: m.mode === 'async' ? '≥ 0.8 (authentication before the body)' : 'reported',
            met: m.mode !== 'async' || ratio >= 0.8,
            note: `bare ${Math.round(b.perSecond)} req/s; pairs ${ratios.map((r) => r.toFixed(2)).join('/')}`,
          },
          {
            name: `${m.mode}: server CPU per accepted event ÷ bare`,
            value: round(cpuPerRequest.ours / cpuPerRequest.bare),
            unit: 'x',
            goal: 'reported',
            met: true,
            note: `${Math.round(cpuPerRequest.ours)} µs vs ${Math.round(cpuPerRequest.bare)} µs`,
          },
          {
            name: `${m.mode}: reply latency p50 / p99`,
            value: round(o.p99),
            unit: 'ms (p99)',
            goal: busGoal ? 'p99 ≤ 50 ms' : 'well under 10 s',
            met: busGoal ? o.p99 <= 50 : o.p99 < 10_000,
            note: `p50 ${round(o.p50)} ms; bare p50 ${round(b.p50)} ms, p99 ${round(b.p99)} ms`,
          },
          {
            name: `${m.mode}: event → workflow created p50 / p99 at ${round(lag.actualRate, 0)} events/s`,
            value: round(lag.p99, 1),
            unit: 'ms (p99)',
            goal: '< 1000 ms',
            met: lag.p99 < 1000,
            note: `p50 ${round(lag.p50, 1)} ms, max ${round(lag.max, 1)} ms`,
          },
          {
            name: `${m.mode}: events → workflows created (none lost)`,
            value: lag.created,
            unit: `of ${lag.total}`,
            goal: `${lag.total}, 0 refused`,
            met: lag.created === lag.total && lag.rejected === 0,
            note: `${lag.rejected} refused`,
          },
        );
      } finally {
        await stopChild(ours.proc);
      }
    }
  } finally {
    await stopChild(bare.proc);
    await nats.stop();
    for (const name of namespaces) await core.deleteNamespace({ name }).catch(() => {});
    await plane?.stop();
  }
  return figures;
}

const argv = process.argv;
if (argv.includes('--child')) {
  await child(argv[argv.indexOf('--child') + 1]!, argv[argv.indexOf('--child') + 2]);
} else if (import.meta.url === `file://${argv[1]}`) {
  printFigures('plugflow server: event endpoint', await runServerBench());
}
