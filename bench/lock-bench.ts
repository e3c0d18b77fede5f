/**
 * Lock hand-over latency (issue 13): 100 workflows queued on one mutex, each one step that holds
 * it. A hand-over is the time from a holder's step ending (the nanosecond clock the step prints
 * as its last act) to the next holder's pod being created (the ADDED event of a pod watch, same
 * machine clock). Baseline, measured in the same run: the same transition between two steps of
 * one workflow without a lock (step ends → next step's pod created). Own control plane, the local
 * pod runner as the kubelet.
 *
 *   npx tsx bench/lock-bench.ts     (also part of `make bench`)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LABEL_WORKFLOW, type Template, type Workflow } from '../src/api/index.js';
import { PODS, WORKFLOWS } from '../src/kube/resource.js';
import { startCountedController } from './counted-controller.js';
import { percentile, type Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const step = (synchronization?: Template['synchronization']): Template => ({
  name: 'work',
  ...(synchronization ? { synchronization } : {}),
  script: { image: 'alpine:3', command: ['sh'], source: 'sleep 0.05; date +%s%N' },
});

const wf = (name: string, spec: Workflow['spec']): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name },
  spec,
});

export async function runLockBench(queued = 100, baselineSteps = 30): Promise<Figure[]> {
  const work = mkdtempSync(join(tmpdir(), 'plugflow-lock-bench-'));
  const stack = await startCountedController(work);
  const { client } = stack;
  // Pod name → when this process saw it created.
  const added = new Map<string, { at: number; workflow: string; node: string }>();
  const abort = new AbortController();
  const watching = client
    .watch(
      PODS,
      { namespace: 'default' },
      (e) => {
        const meta = (e.object as { metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> } })
          .metadata;
        if (e.type === 'ADDED' && meta?.name && !added.has(meta.name))
          added.set(meta.name, { at: Date.now(), workflow: meta.labels?.[LABEL_WORKFLOW] ?? '', node: meta.name });
      },
      abort.signal,
    )
    .catch(() => {});
  const finish = async (names: string[]) => {
    const done = new Map<string, Workflow>();
    while (done.size < names.length) {
      for (const w of (await client.list<Workflow>(WORKFLOWS, { namespace: 'default' })).items) {
        if (!names.includes(w.metadata.name!) || done.has(w.metadata.name!)) continue;
        if (w.status?.phase === 'Succeeded') done.set(w.metadata.name!, w);
        else if (w.status?.phase === 'Failed' || w.status?.phase === 'Error') throw new Error(`${w.metadata.name}: ${w.status.message}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return names.map((n) => done.get(n)!);
  };
  /** Step end (ms) and its pod's created-time (ms) per pod, in the order the steps ran. */
  const runs = (wfs: Workflow[]) =>
    wfs
      .flatMap((w) =>
        Object.values(w.status?.nodes ?? {})
          .filter((n) => n.type === 'Pod')
          .map((n) => ({
            end: Number(BigInt(String(n.outputs?.result ?? '0').trim()) / 1_000_000n),
            created: added.get(n.podName ?? '')?.at,
          })),
      )
      .sort((a, b) => a.end - b.end);
  const gaps = (rs: { end: number; created?: number }[]) =>
    rs.slice(1).map((r, i) => {
      if (r.created === undefined) throw new Error('a pod was not seen created');
      return r.created - rs[i]!.end;
    });
  try {
    // Baseline: one workflow, steps one after the other, no lock.
    const chain = wf('chain', {
      entrypoint: 'main',
      templates: [{ name: 'main', steps: Array.from({ length: baselineSteps }, (_, i) => [{ name: `s${i}`, template: 'work' }]) }, step()],
    });
    await client.create(WORKFLOWS, 'default', chain);
    const baseline = gaps(runs(await finish(['chain'])));
    // The contended run: every workflow queued on one mutex at once.
    const names = Array.from({ length: queued }, (_, i) => `locked-${String(i).padStart(3, '0')}`);
    const t0 = Date.now();
    for (const n of names)
      await client.create(WORKFLOWS, 'default', wf(n, { entrypoint: 'work', templates: [step({ mutex: { name: 'bench' } })] }));
    const handovers = gaps(runs(await finish(names)));
    const total = (Date.now() - t0) / 1000;
    const [p50, p99, b50] = [percentile(handovers, 50), percentile(handovers, 99), percentile(baseline, 50)];
    return [
      {
        name: `mutex hand-over, holder's step ends → next holder's pod created, p50 (${queued} workflows queued)`,
        value: Math.round(p50),
        unit: 'ms',
        goal: 'reported, with the ratio to a plain step-to-step transition',
        met: true,
        note: `${(p50 / b50).toFixed(2)}× the p50 of ${b50.toFixed(0)} ms between two steps of one workflow without a lock; ${queued} holders in ${total.toFixed(0)} s`,
      },
      {
        name: 'mutex hand-over p99',
        value: Math.round(p99),
        unit: 'ms',
        goal: 'reported',
        met: true,
        note: `baseline p99 ${percentile(baseline, 99).toFixed(0)} ms`,
      },
    ];
  } finally {
    abort.abort();
    await watching;
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection('locks', 'Synchronization (`npx tsx bench/lock-bench.ts`; also part of `make bench`)', await runLockBench(), t0);
}
