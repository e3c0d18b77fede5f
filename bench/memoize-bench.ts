/**
 * Memoize hit cost (issue 13): what a 1-step workflow whose step is answered from the memoize
 * cache costs the controller, against the same workflow whose step runs (a miss, which also
 * stores the entry). Own control plane, the local pod runner as the kubelet, the controller's own
 * write counter (`plugflow_controller_api_writes_total`) and the workflow's create → Succeeded
 * time as seen by a client polling every 20 ms.
 *
 *   npx tsx bench/memoize-bench.ts     (also part of `make bench`)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Workflow } from '../src/api/index.js';
import { startCountedController } from './counted-controller.js';
import type { Figure } from './figures.js';
import { writeFiguresSection } from './run-all.js';

function memoized(name: string, num: number): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec: {
      entrypoint: 'square',
      arguments: { parameters: [{ name: 'num', value: String(num) }] },
      templates: [
        {
          name: 'square',
          inputs: { parameters: [{ name: 'num' }] },
          memoize: { key: 'square-{{inputs.parameters.num}}', maxAge: '1h', cache: { configMap: { name: 'bench-cache' } } },
          outputs: { parameters: [{ name: 'sq', valueFrom: { path: '/tmp/sq' } }] },
          container: {
            image: 'alpine:3',
            command: ['sh', '-c', 'echo $(({{inputs.parameters.num}} * {{inputs.parameters.num}})) > /tmp/sq'],
          },
        },
      ],
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runMemoizeBench(count = 10): Promise<Figure[]> {
  const work = mkdtempSync(join(tmpdir(), 'plugflow-memoize-bench-'));
  const stack = await startCountedController(work);
  const many = (prefix: string) => Array.from({ length: count }, (_, i) => memoized(`${prefix}-${i}`, i));
  try {
    const ran = await stack.runEach(many('run')); // every key new: the step runs and its entry is stored
    const hit = await stack.runEach(many('hit')); // the same keys again: answered from the cache
    return [
      {
        name: 'memoize hit: controller API writes per 1-step workflow',
        value: Number(hit.writesPerWorkflow.toFixed(1)),
        unit: 'writes',
        goal: '< the same workflow running its step',
        met: hit.writesPerWorkflow < ran.writesPerWorkflow,
        note: `running the step (and storing the entry): ${ran.writesPerWorkflow.toFixed(1)} writes; ${count} workflows each, one after the other`,
      },
      {
        name: 'memoize hit: create → Succeeded, hit / run (median)',
        value: Number((median(hit.ms) / median(ran.ms)).toFixed(2)),
        unit: 'x',
        goal: 'reported (< 1: faster)',
        met: true,
        note: `hit ${median(hit.ms).toFixed(0)} ms vs run ${median(ran.ms).toFixed(0)} ms (local pod runner, no image pull)`,
      },
    ];
  } finally {
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection('memoize', 'Memoize (`npx tsx bench/memoize-bench.ts`; also part of `make bench`)', await runMemoizeBench(), t0);
}
