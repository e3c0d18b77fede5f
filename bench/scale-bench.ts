/**
 * Scale curves of the whole system on this machine:
 *
 * 1. Workflows per minute and API writes per workflow as the number of workflows grows (10,
 *    100, 1,000), two kinds of one-step workflow:
 *    - pod-less: one `suspend: {duration: 0s}` step — informers, queue, engine, status writes,
 *      no pod: what the controller and the API server can do. All N are submitted at once.
 *    - pod: one container step (`echo`) run by the local pod runner as real processes (init,
 *      wait and main containers): controller + runner + API server together. 10 and 100 are
 *      submitted at once; 1,000 at once would start ~2,000 Node.js processes together (the
 *      runner binds every pod it is given: it does not enforce the node's 110-pod capacity) and
 *      exhaust this machine's memory, so that point keeps at most 100 workflows in flight and
 *      stops at a time limit (SCALE_POD_LIMIT_MIN, default 25, enough for all 1,000 here): its figure is the sustained rate
 *      and how many of the 1,000 finished in that time.
 *    Workflows are created straight through the API (16 at a time), so the REST server is not
 *    part of this figure. Writes are counted twice: the controller's own (its metrics) and every
 *    client's (kube-apiserver's apiserver_request_total for POST/PUT/PATCH/DELETE, which includes
 *    the runner's pod status writes and the submissions themselves). Each curve's 10-workflow
 *    point is the baseline its ratios refer to.
 * 2. The event endpoint's accepted events/s and reply latency (p50/p99) as the offered load
 *    grows, open loop (sends are scheduled at a fixed rate whatever the replies do; latency is
 *    measured from the scheduled time, so queueing in the client counts). The server runs as its
 *    own process (`plugflow server`, plain HTTP, client auth); the namespace has one binding
 *    whose selector is evaluated and does not match, so every event goes through the endpoint,
 *    the queue and a binding evaluation but creates nothing.
 *
 * Run: npx tsx bench/scale-bench.ts   (starts the whole system; SCALE_POINTS=10,100 to trim)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, request } from 'undici';
import { DEFAULT_INSTALL_NAMESPACE, type Workflow } from '../src/api/index.js';
import { freePort } from '../src/devenv/control-plane.js';
import { REPO_ROOT, serviceAccountKubeConfig, startDevStack, type DevStack } from '../src/devenv/dev-stack.js';
import { KubeClient } from '../src/kube/client.js';
import { NAMESPACES, WORKFLOWS } from '../src/kube/resource.js';
import { Component } from '../test/soak/component.js';
import { printFigures, type Figure } from './figures.js';

export type StepKind = 'pod' | 'podless';

export interface ScalePoint {
  kind: StepKind;
  workflows: number;
  /** Most workflows in flight at once (N when all are submitted at once). */
  window: number;
  /** Completed within the time limit. */
  completed: number;
  seconds: number;
  perMinute: number;
  controllerWritesPerWorkflow: number;
  allWritesPerWorkflow: number;
  timedOut: boolean;
}

export interface LoadPoint {
  offered: number;
  achieved: number;
  accepted: number;
  rejected: number;
  errors: number;
  p50: number;
  p99: number;
}

export interface ScaleResult {
  figures: Figure[];
  scale: ScalePoint[];
  load: LoadPoint[];
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);
const round = (x: number, d = 1) => Number(x.toFixed(d));

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** kube-apiserver's count of write requests (all clients) so far. */
async function apiServerWrites(stack: DevStack): Promise<number> {
  const server = stack.adminKubeConfig.getCurrentCluster()!.server;
  const ca = stack.adminKubeConfig.getCurrentCluster()!.caData;
  const { Agent } = await import('undici');
  const dispatcher = new Agent({ connect: ca ? { ca: Buffer.from(ca, 'base64').toString() } : { rejectUnauthorized: false } });
  try {
    const res = await request(`${server}/metrics`, { headers: { authorization: `Bearer ${stack.adminToken}` }, dispatcher });
    const text = await res.body.text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith('apiserver_request_total{')) continue;
      if (!/verb="(POST|PUT|PATCH|DELETE|APPLY)"/.test(line)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  } finally {
    await dispatcher.close();
  }
}

async function controllerWrites(stack: DevStack): Promise<number> {
  const got = await stack.controller.metrics.apiWrites.get();
  return got.values.reduce((s, v) => s + v.value, 0);
}

function tinyWorkflow(name: string, kind: StepKind): Workflow {
  const main =
    kind === 'pod'
      ? { name: 'main', container: { image: 'busybox', command: ['echo', 'hi'] } }
      : { name: 'main', suspend: { duration: '0s' } };
  return { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name }, spec: { entrypoint: 'main', templates: [main] } };
}

async function scalePoint(
  stack: DevStack,
  client: KubeClient,
  kind: StepKind,
  n: number,
  window: number,
  limitMs: number,
  log: (l: string) => void,
): Promise<ScalePoint> {
  const ns = `scale-${kind}-${n}-${Date.now().toString(36)}`;
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  const writes0 = [await controllerWrites(stack), await apiServerWrites(stack)];
  const t0 = performance.now();
  const deadline = t0 + limitMs;
  let created = 0;
  let completed = 0;
  let lastFinish = t0;
  let lastLog = t0;
  const submit = async (upTo: number) => {
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (created < upTo) {
          const i = created++;
          await client.create(WORKFLOWS, ns, tinyWorkflow(`w-${i}`, kind));
        }
      }),
    );
  };
  await submit(Math.min(n, window));
  log(
    `  ${created} workflows created in ${((performance.now() - t0) / 1000).toFixed(1)} s${window < n ? ` (then more as they finish, at most ${window} in flight)` : ''}`,
  );
  while (performance.now() < deadline) {
    const list = await client.list<Workflow>(WORKFLOWS, { namespace: ns });
    const done = list.items.filter((w) => FINAL.has(w.status?.phase ?? '')).length;
    if (done > completed) lastFinish = performance.now();
    completed = done;
    if (performance.now() - lastLog > 30_000) {
      log(`  ${completed}/${n} done after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      lastLog = performance.now();
    }
    if (completed >= n) break;
    if (created < n && created - completed < window) await submit(Math.min(n, completed + window));
    await new Promise((r) => setTimeout(r, n >= 1000 ? 1000 : 250));
  }
  const seconds = (lastFinish - t0) / 1000;
  const writes1 = [await controllerWrites(stack), await apiServerWrites(stack)];
  const failed = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items.filter(
    (w) => w.status?.phase === 'Failed' || w.status?.phase === 'Error',
  );
  if (failed.length)
    log(`  WARNING: ${failed.length} workflows failed, e.g. ${failed[0]!.metadata.name}: ${failed[0]!.status?.message ?? ''}`);
  await client.delete(NAMESPACES, undefined, ns).catch(() => {});
  // Let the namespace (and its pods) go before the next point, so its cleanup is not measured.
  for (let i = 0; i < 240; i++) {
    try {
      await client.get(NAMESPACES, undefined, ns);
    } catch {
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    kind,
    workflows: n,
    window,
    completed,
    seconds: round(seconds),
    perMinute: round(completed / (seconds / 60)),
    controllerWritesPerWorkflow: round((writes1[0]! - writes0[0]!) / Math.max(1, completed)),
    allWritesPerWorkflow: round((writes1[1]! - writes0[1]!) / Math.max(1, completed)),
    timedOut: completed < n,
  };
}

async function loadPoint(url: string, token: string, ns: string, rate: number, seconds: number): Promise<LoadPoint> {
  const pool = new Pool(url, { connections: 64, pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-bench': 'load' };
  const total = Math.round(rate * seconds);
  const lat: number[] = [];
  let accepted = 0;
  let rejected = 0;
  let errors = 0;
  const sends: Promise<void>[] = [];
  const t0 = performance.now() + 50;
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const start = Math.max(due, performance.now());
    sends.push(
      pool
        .request({
          path: `/api/v1/events/${ns}/`,
          method: 'POST',
          headers,
          body: JSON.stringify({ n: i, load: rate }),
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        })
        .then(async (res) => {
          await res.body.dump();
          lat.push(performance.now() - start);
          if (res.statusCode === 200) accepted++;
          else rejected++;
        })
        .catch(() => void errors++),
    );
  }
  await Promise.all(sends);
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  lat.sort((a, b) => a - b);
  return {
    offered: rate,
    achieved: round(accepted / elapsed),
    accepted,
    rejected,
    errors,
    p50: round(percentile(lat, 50), 2),
    p99: round(percentile(lat, 99), 2),
  };
}

async function eventLoadCurve(
  stack: DevStack,
  client: KubeClient,
  loads: number[],
  seconds: number,
  log: (l: string) => void,
): Promise<LoadPoint[]> {
  const ns = `scale-events-${Date.now().toString(36)}`;
  await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
  await client.create(
    { group: 'plugflow.io', version: 'v1alpha1', plural: 'workfloweventbindings', kind: 'WorkflowEventBinding', namespaced: true },
    ns,
    {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'WorkflowEventBinding',
      metadata: { name: 'never' },
      spec: {
        event: { selector: 'payload.deploy == true && metadata["x-bench"] == ["deploy"]' },
        submit: { workflowTemplateRef: { name: 'absent' } },
      },
    },
  );
  const dir = join(stack.dir, 'scale-bench');
  mkdirSync(dir, { recursive: true });
  const kubeconfig = join(dir, 'server.kubeconfig');
  writeFileSync(
    kubeconfig,
    (await serviceAccountKubeConfig(stack.adminKubeConfig, DEFAULT_INSTALL_NAMESPACE, 'plugflow-server')).exportConfig(),
    { mode: 0o600 },
  );
  const port = await freePort();
  const server = new Component({
    name: 'bench-server',
    args: [
      'server',
      '--kubeconfig',
      kubeconfig,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--secure=false',
      '--auth-mode',
      'client',
      '--namespace',
      ns,
    ],
    env: { PLUGFLOW_LOG_LEVEL: 'warn' },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    logDir: dir,
  });
  await server.start();
  const points: LoadPoint[] = [];
  try {
    const url = `http://127.0.0.1:${port}`;
    await loadPoint(url, stack.adminToken!, ns, 200, 2); // warm-up: JIT, connections, access review cache
    for (const rate of loads) {
      const p = await loadPoint(url, stack.adminToken!, ns, rate, seconds);
      log(`  offered ${rate}/s: accepted ${p.achieved}/s (${p.rejected} refused, ${p.errors} errors), p50 ${p.p50} ms, p99 ${p.p99} ms`);
      points.push(p);
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await server.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => {});
  }
  return points;
}

/** Waits (bounded) until the controller's queue has been empty for 3 s: nothing older is counted. */
async function quiet(stack: DevStack, log: (l: string) => void): Promise<void> {
  const until = Date.now() + 300_000;
  let since = Date.now();
  while (Date.now() < until) {
    if (stack.controller.queue.len() > 0 || stack.controller.queue.inFlight() > 0) since = Date.now();
    else if (Date.now() - since >= 3000) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  log('warning: the controller did not become idle within 5 min before the scale curves');
}

export interface ScaleOptions {
  /** Workflow counts of both curves (default 10, 100, 1000). */
  points?: number[];
  /** Most pod workflows in flight at once (default 100). */
  podWindow?: number;
  loads?: number[];
  loadSeconds?: number;
  /** Longest time one point may take (default 15 min). */
  pointLimitMs?: number;
  log?: (line: string) => void;
}

export async function runScaleBench(stack: DevStack, o: ScaleOptions = {}): Promise<ScaleResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const client = await KubeClient.fromKubeConfig(stack.adminKubeConfig);
  try {
    await quiet(stack, log);
    const scale: ScalePoint[] = [];
    const podWindow = o.podWindow ?? 100;
    for (const kind of ['podless', 'pod'] as const) {
      for (const n of o.points ?? [10, 100, 1000]) {
        log(`scale: ${n} one-step ${kind === 'pod' ? 'container' : 'pod-less (suspend 0s)'} workflows`);
        const window = kind === 'pod' ? Math.min(n, podWindow) : n;
        const p = await scalePoint(
          stack,
          client,
          kind,
          n,
          window,
          o.pointLimitMs ?? (kind === 'pod' && n > podWindow ? Number(process.env.SCALE_POD_LIMIT_MIN ?? 25) * 60_000 : 15 * 60_000),
          log,
        );
        log(
          `  ${p.completed}/${n} in ${p.seconds} s: ${p.perMinute} workflows/min, ${p.controllerWritesPerWorkflow} controller writes and ${p.allWritesPerWorkflow} API writes (all clients) per workflow`,
        );
        scale.push(p);
      }
    }
    log('event endpoint: offered load curve');
    const load = await eventLoadCurve(stack, client, o.loads ?? [250, 500, 1000, 2000, 4000, 8000], o.loadSeconds ?? 4, log);
    return { figures: scaleFigures(scale, load), scale, load };
  } finally {
    await client.close();
  }
}

function scaleFigures(scale: ScalePoint[], load: LoadPoint[]): Figure[] {
  const figures: Figure[] = [];
  for (const kind of ['podless', 'pod'] as const) {
    const points = scale.filter((p) => p.kind === kind);
    const base = points[0];
    const what = kind === 'pod' ? 'one-step container workflows (real local processes)' : 'one-step pod-less workflows (suspend 0s)';
    for (const p of points) {
      const how = p.window < p.workflows ? `${p.workflows}, at most ${p.window} in flight` : `${p.workflows} at once`;
      const ratio = base && base !== p ? ` — ×${(p.perMinute / base.perMinute).toFixed(2)} the ${base.workflows}-workflow rate` : '';
      figures.push({
        name: `workflows/min, ${what}, ${how}`,
        value: p.perMinute,
        unit: 'workflows/min',
        goal: p === base ? 'reported (baseline)' : `≥ 0.5 × the ${base!.workflows}-workflow rate, all complete`,
        met: !p.timedOut && (p === base || p.perMinute >= 0.5 * base!.perMinute),
        note: `${p.completed}/${p.workflows} completed in ${p.seconds} s${p.timedOut ? ` (time limit reached: all ${p.workflows} would take about ${(p.workflows / p.perMinute || 0).toFixed(0)} min at this rate)` : ''}${ratio}`,
      });
      figures.push({
        name: `API writes per workflow by the controller, ${kind === 'pod' ? 'container' : 'pod-less'}, ${p.workflows} workflows`,
        value: p.controllerWritesPerWorkflow,
        unit: 'writes',
        goal: p === base ? '≤ 10' : `≤ 10 and ≤ 1.2 × the ${base!.workflows}-workflow figure`,
        met:
          p.controllerWritesPerWorkflow <= 10 && (p === base || p.controllerWritesPerWorkflow <= 1.2 * base!.controllerWritesPerWorkflow),
        note: `all clients (runner, submissions included): ${p.allWritesPerWorkflow} writes per workflow${base && base !== p ? `; controller ×${(p.controllerWritesPerWorkflow / base.controllerWritesPerWorkflow).toFixed(2)} the baseline` : ''}`,
      });
    }
  }
  const best = load.reduce((a, b) => (b.achieved > a.achieved ? b : a), load[0]!);
  if (best) {
    figures.push({
      name: 'event endpoint: most accepted events/s over the load curve',
      value: best.achieved,
      unit: 'events/s',
      goal: '≥ 1000 events/s',
      met: best.achieved >= 1000,
      note: `at ${best.offered}/s offered; p99 ${best.p99} ms`,
    });
  }
  for (const p of load) {
    figures.push({
      name: `event endpoint p99 reply latency at ${p.offered} events/s offered`,
      value: p.p99,
      unit: 'ms',
      goal: '< 10000 ms (spec: always under 10 s)',
      met: p.p99 < 10_000 && p.errors === 0,
      note: `accepted ${p.achieved}/s (×${(p.achieved / p.offered).toFixed(2)} of offered), ${p.rejected} refused (503), ${p.errors} errors, p50 ${p.p50} ms`,
    });
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const stack = await startDevStack({
    serverPort: 0,
    secure: false,
    dir: join(REPO_ROOT, '.plugflow', `scale-bench-${Date.now()}`),
    progress: (l) => console.log(l),
  });
  try {
    const points = process.env.SCALE_POINTS?.split(',').map(Number);
    const r = await runScaleBench(stack, { ...(points ? { points } : {}) });
    printFigures('scale', r.figures);
  } finally {
    await stack.stop();
  }
  process.exit(0);
}
