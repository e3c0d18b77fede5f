/**
 * Huge workflows (issue 34): one controller runs workflows of 5,000, 9,000 and 100,000 pod-less
 * nodes — a steps loop and a wide DAG of `suspend: {duration: 1}` steps, 5,000 running at a time
 * (template `parallelism`) — against a control plane of its own and a real PostgreSQL. Over
 * `--offload-nodes-above` (10,000) the nodes live in the database by version and the object keeps
 * a summary (src/controller/node-offload.ts); below it they are compressed in the object. The
 * 100,000-item loop runs twice: 5,000 and 1,000 at a time.
 *
 * Measured per workflow, one after the other in one process (the controller runs in this process,
 * so its resident memory is this process's; sampled every 250 ms):
 * - create → Succeeded;
 * - every reconcile of it, from the controller's own timing (the value it gives its
 *   `plugflow_controller_reconcile_duration_seconds` histogram): p50, p99, max;
 * - the largest the workflow object got (its JSON as the API server returns it, re-serialized;
 *   read every 500 ms);
 * - the peak resident memory, and the database rows the nodes took.
 *
 *   npx tsx bench/huge-workflow-bench.ts      (HUGE_SIZES=5000,100000 to choose; also part of `make bench`)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateWorkflow, offloadedVersion, type Workflow } from '../src/api/index.js';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { startController } from '../src/controller/controller.js';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { installBase } from '../src/devenv/dev-stack.js';
import { startPostgres } from '../src/devenv/postgres.js';
import { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const MIB = 1024 * 1024;

type Shape = 'loop' | 'dag';

function hugeWorkflow(shape: Shape, n: number, atOnce: number): Workflow {
  const wait = { name: 'wait', inputs: { parameters: [{ name: 'i' }] }, suspend: { duration: '1' } };
  const args = { parameters: [{ name: 'i', value: '{{item}}' }] };
  const main =
    shape === 'loop'
      ? {
          name: 'main',
          parallelism: atOnce,
          steps: [[{ name: 'each', template: 'wait', withSequence: { count: String(n) }, arguments: args }]],
        }
      : {
          // A wide DAG: 100 independent tasks, each a loop of n/100 items.
          name: 'main',
          parallelism: atOnce,
          dag: {
            tasks: Array.from({ length: 100 }, (_, t) => ({
              name: `t${t}`,
              template: 'wait',
              withSequence: { count: String(n / 100) },
              arguments: args,
            })),
          },
        };
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: `huge-${shape}-${n}-${atOnce}`, namespace: 'default' },
    spec: { entrypoint: 'main', templates: [main, wait] } as Workflow['spec'],
  };
}

interface Run {
  shape: Shape;
  n: number;
  atOnce: number;
  seconds: number;
  phase: string;
  nodes: number;
  reconciles: number[];
  /** Each stage's observations (ms), from the controller's stage histogram. */
  stages: Record<string, number[]>;
  maxObjectBytes: number;
  peakRssMiB: number;
  startRssMiB: number;
  offloaded: boolean;
  rows: number;
}

export async function runHugeWorkflowBench(): Promise<Figure[]> {
  const sizes = (process.env.HUGE_SIZES ?? '5000,9000,100000').split(',').map(Number);
  const work = mkdtempSync(join(tmpdir(), 'plugflow-huge-'));
  const plane = new ControlPlane({ dir: join(work, 'plane') });
  const db = await startPostgres({ log: (l) => console.log(l) });
  await plane.start();
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  await installBase(kc, ['default']);
  const client = await KubeClient.fromKubeConfig(kc);
  const store = ArchiveStore.open(db.url);
  const controller = await startController({
    kubeConfig: kc,
    metricsPort: 0,
    workers: 2,
    archiveUrl: db.url,
    log: createLogger('controller', 'warn'),
  });
  // The controller's own timing of each reconcile, as it gives it to its histogram.
  let reconciles: number[] = [];
  const histogram = controller.metrics.reconcileDuration;
  const observe = histogram.observe.bind(histogram);
  histogram.observe = ((labels: { result: string }, seconds: number) => {
    reconciles.push(seconds * 1000);
    observe(labels, seconds);
  }) as typeof histogram.observe;
  // And where each reconcile's time went (hydrate, engine, offload, status, features, actions).
  let stages: Record<string, number[]> = {};
  const stageHistogram = controller.metrics.reconcileStage;
  const observeStage = stageHistogram.observe.bind(stageHistogram);
  stageHistogram.observe = ((labels: { stage: string }, seconds: number) => {
    (stages[labels.stage] ??= []).push(seconds * 1000);
    observeStage(labels, seconds);
  }) as typeof stageHistogram.observe;

  const runs: Run[] = [];
  try {
    // Each size 5,000 at a time; the 100,000-item loop also 1,000 at a time (a reconcile then
    // changes 2,000 nodes rather than 10,000, and what is left is the cost of the size itself).
    const cases: [Shape, number, number][] = [
      ...sizes.map((n): [Shape, number, number] => ['loop', n, 5000]),
      ...(sizes.includes(100_000)
        ? [['loop', 100_000, 1000] as [Shape, number, number], ['dag', 100_000, 5000] as [Shape, number, number]]
        : []),
    ];
    for (const [shape, n, atOnce] of cases) {
      const wf = hugeWorkflow(shape, n, atOnce);
      const name = wf.metadata.name!;
      global.gc?.();
      const startRss = process.memoryUsage().rss;
      let peak = startRss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 250);
      reconciles = [];
      stages = {};
      const t0 = performance.now();
      await client.create(WORKFLOWS, 'default', wf);
      let got: Workflow;
      let maxBytes = 0;
      for (;;) {
        got = await client.get<Workflow>(WORKFLOWS, 'default', name);
        maxBytes = Math.max(maxBytes, Buffer.byteLength(JSON.stringify(got)));
        if (got.status?.phase && ['Succeeded', 'Failed', 'Error'].includes(got.status.phase)) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const seconds = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 1000)); // its last reconciles (labels, archive)
      clearInterval(sampler);
      const uid = got.metadata!.uid!;
      const offloaded = offloadedVersion(got.status) !== undefined;
      const nodes = offloaded
        ? Object.keys(await store.nodeStatus().load(uid, offloadedVersion(got.status)!)).length
        : Object.keys(inflateWorkflow(got).status?.nodes ?? {}).length;
      const run: Run = {
        shape,
        atOnce,
        n,
        seconds,
        phase: got.status?.phase ?? '',
        nodes,
        reconciles: [...reconciles],
        stages: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, [...v]])),
        maxObjectBytes: maxBytes,
        peakRssMiB: peak / MIB,
        startRssMiB: startRss / MIB,
        offloaded,
        rows: await store.nodeStatus().rowCount(uid),
      };
      runs.push(run);
      console.log(`[huge]   stages (ms): ${stageSummary(run.stages)}`);
      console.log(
        `[huge] ${shape} ${n} (${atOnce} at once): ${run.phase} in ${seconds.toFixed(1)} s, ${nodes} nodes, ${run.reconciles.length} reconciles p50 ${percentile(run.reconciles, 50).toFixed(0)} ms p99 ${percentile(run.reconciles, 99).toFixed(0)} ms, object ≤ ${maxBytes} B, RSS ${run.startRssMiB.toFixed(0)} → ${run.peakRssMiB.toFixed(0)} MiB, ${offloaded ? `offloaded (${run.rows} rows)` : 'in the object'}`,
      );
      await client.delete(WORKFLOWS, 'default', name);
      for (;;) {
        try {
          await client.get(WORKFLOWS, 'default', name);
        } catch (err) {
          if (isNotFound(err)) break;
          throw err;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await controller.stop();
    await store.close();
    await plane.stop();
    await db.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return figures(runs);
}

/** Each stage's p50/p99/total, in the order a reconcile goes through them. */
function stageSummary(stages: Record<string, number[]>): string {
  const order = ['hydrate', 'engine', 'offload', 'status', 'features', 'actions'];
  return order
    .filter((s) => stages[s]?.length)
    .map((s) => {
      const v = stages[s]!;
      const total = v.reduce((a, b) => a + b, 0);
      return `${s} p50 ${percentile(v, 50).toFixed(0)} p99 ${percentile(v, 99).toFixed(0)} total ${total.toFixed(0)}`;
    })
    .join('; ');
}

function figures(runs: Run[]): Figure[] {
  const out: Figure[] = [];
  for (const r of runs) {
    const what = `${r.shape === 'loop' ? 'steps loop' : 'wide DAG (100 tasks)'} of ${r.n.toLocaleString('en-US')} suspend steps, ${r.atOnce.toLocaleString('en-US')} at a time`;
    const p99 = percentile(r.reconciles, 99);
    out.push({
      name: `${what}: create → ${r.phase}`,
      value: Number(r.seconds.toFixed(1)),
      unit: 's',
      goal: 'Succeeded',
      met: r.phase === 'Succeeded' && r.nodes >= r.n,
      note: `${r.nodes.toLocaleString('en-US')} nodes; peak RSS of the controller's process ${r.peakRssMiB.toFixed(0)} MiB (${r.startRssMiB.toFixed(0)} before); ${r.offloaded ? `nodes offloaded: ${r.rows.toLocaleString('en-US')} rows in PostgreSQL` : 'nodes compressed in the object'}`,
    });
    out.push({
      name: `${what}: reconcile p99`,
      value: Number(p99.toFixed(0)),
      unit: 'ms',
      goal: r.n >= 100_000 ? '≤ 1000' : 'reported',
      met: r.n < 100_000 || p99 <= 1000,
      note: `${r.reconciles.length} reconciles; p50 ${percentile(r.reconciles, 50).toFixed(0)} ms, max ${Math.max(...r.reconciles).toFixed(0)} ms (engine, status write and the database write of the changed nodes); by stage (ms): ${stageSummary(r.stages)}`,
    });
    out.push({
      name: `${what}: largest the workflow object got`,
      value: r.maxObjectBytes,
      unit: 'bytes',
      goal: `< ${MIB.toLocaleString('en-US')} (1 MiB)`,
      met: r.maxObjectBytes < MIB,
    });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection(
    'huge-workflows',
    'Huge workflows (`npx tsx bench/huge-workflow-bench.ts`; also part of `make bench`)',
    await runHugeWorkflowBench(),
    t0,
  );
  process.exit(0);
}
