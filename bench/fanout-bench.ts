/**
 * Large fan-out in the engine (issue 12): a steps template whose one step loops `withSequence`
 * over N items of a container template, at N = 100, 1,000 and 5,000 nodes. The engine runs as the
 * controller runs it — `reconcileWorkflow(workflow with its stored status, observations)` — with
 * the pods observed Running, then completed a tenth at a time (11 reconciles after the first).
 * Measured: the mean time of one reconcile while the loop runs, per node (flat as N grows is the
 * goal: a reconcile does work in proportion to the workflow, never more), and the workflow at the
 * end as stored (nodes compressed, src/api/compressed-nodes.ts) against the controller's status
 * size limit (status-size.ts), with its uncompressed size.
 *
 * Pure: no cluster, no I/O. The first reconcile (which creates the N nodes and pods) is reported
 * apart.
 *
 *   npx tsx bench/fanout-bench.ts     (also part of `make bench`)
 */
import type { Workflow } from '../src/api/index.js';
import { DEFAULT_MAX_STATUS_BYTES, serializedSize } from '../src/controller/status-size.js';
import { reconcileWorkflow, type PodObservation } from '../src/engine/index.js';
import type { Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

const SIZES = [100, 1000, 5000];
const ROUNDS = 10;

function fanout(n: number): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: `fanout-${n}`, namespace: 'bench', uid: `uid-${n}` },
    spec: {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [
              {
                name: 'each',
                template: 'work',
                withSequence: { count: String(n) },
                arguments: { parameters: [{ name: 'i', value: '{{item}}' }] },
              },
            ],
          ],
        },
        {
          name: 'work',
          inputs: { parameters: [{ name: 'i' }] },
          container: { image: 'alpine:3.20', command: ['echo', 'item {{inputs.parameters.i}}'] },
        },
      ],
    },
  };
}

interface Point {
  n: number;
  firstMs: number;
  meanMs: number;
  nodes: number;
  /** As stored (large node maps compressed) and uncompressed. */
  bytes: number;
  rawBytes: number;
  phase: string;
}

function measure(n: number): Point {
  const wf = fanout(n);
  const start = Date.parse('2026-01-01T00:00:00Z');
  const pods = new Map<string, PodObservation>();
  const at = (s: number) => new Date(start + s * 1000).toISOString();
  const reconcile = (s: number): number => {
    const t0 = performance.now();
    const result = reconcileWorkflow(wf, { pods: [...pods.values()], tasks: [], now: at(s), pluginsEnabled: false });
    const ms = performance.now() - t0;
    wf.status = result.status;
    for (const a of result.actions) {
      if (a.kind === 'createPod' && !pods.has(a.podName))
        pods.set(a.podName, { podName: a.podName, nodeId: a.nodeId, phase: 'Running', startedAt: at(s) });
    }
    return ms;
  };
  const firstMs = reconcile(1);
  const names = [...pods.keys()];
  const times: number[] = [];
  times.push(reconcile(2)); // every pod observed Running
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of names.slice(Math.floor((r * names.length) / ROUNDS), Math.floor(((r + 1) * names.length) / ROUNDS))) {
      const pod = pods.get(name)!;
      pod.phase = 'Succeeded';
      pod.finishedAt = at(3 + r);
      pod.outputs = { exitCode: '0', result: `item ${name}` };
    }
    times.push(reconcile(3 + r));
  }
  const meanMs = times.reduce((a, b) => a + b, 0) / times.length;
  return {
    n,
    firstMs,
    meanMs,
    nodes: Object.keys(wf.status?.nodes ?? {}).length,
    bytes: serializedSize(wf, wf.status!),
    rawBytes: serializedSize(wf, wf.status!, Number.POSITIVE_INFINITY),
    phase: `${wf.status?.phase ?? ''}${wf.status?.message ? ` (${wf.status.message})` : ''}`,
  };
}

export async function runFanoutBench(): Promise<Figure[]> {
  measure(100); // warm the JIT so the first size is not charged for it
  const points = SIZES.map(measure);
  const perNode = (p: Point) => (p.meanMs * 1000) / p.nodes;
  const base = points[0]!;
  const figures: Figure[] = [];
  for (const p of points) {
    figures.push({
      name: `fan-out of ${p.n.toLocaleString('en-US')} items: engine time per reconcile while it runs`,
      value: Number(p.meanMs.toFixed(2)),
      unit: 'ms',
      goal: 'reported',
      met: true,
      note: `${perNode(p).toFixed(1)} µs per node (${p.nodes} nodes), ×${(perNode(p) / perNode(base)).toFixed(2)} the ${base.n}-item figure; first reconcile (creates the nodes) ${p.firstMs.toFixed(1)} ms; ended ${p.phase}`,
    });
  }
  const last = points[points.length - 1]!;
  const ratio = perNode(last) / perNode(base);
  figures.push({
    name: `engine time per node per reconcile, ${last.n.toLocaleString('en-US')} items / ${base.n} items`,
    value: Number(ratio.toFixed(2)),
    unit: 'x',
    goal: '≤ 2 (flat: a reconcile costs in proportion to the workflow)',
    met: ratio <= 2,
  });
  figures.push({
    name: `stored workflow with ${last.nodes.toLocaleString('en-US')} nodes (nodes compressed)`,
    value: last.bytes,
    unit: 'bytes',
    goal: `< ${DEFAULT_MAX_STATUS_BYTES.toLocaleString('en-US')} (the controller's status size limit)`,
    met: last.bytes < DEFAULT_MAX_STATUS_BYTES,
    note: `${(last.rawBytes / last.bytes).toFixed(1)}× smaller than uncompressed (${last.rawBytes} bytes, ${(last.rawBytes / last.nodes).toFixed(0)} bytes per node, which would not fit)`,
  });
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection(
    'fanout',
    'Large fan-out in the engine (`npx tsx bench/fanout-bench.ts`; also part of `make bench`)',
    await runFanoutBench(),
    t0,
  );
}
