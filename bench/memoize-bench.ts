/**
 * Memoize hit cost (issue 13): what a 1-step workflow whose step is answered from the memoize
 * cache costs the controller, against the same workflow whose step runs (a miss, which also
 * stores the entry). Own control plane, the local pod runner as the kubelet, the controller's own
 * write counter (`plugflow_controller_api_writes_total`) and the workflow's create → Succeeded
 * time as seen by a client polling every 20 ms.
 *
 *   npx tsx bench/memoize-bench.ts     (also part of `make bench`)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Workflow } from '../src/api/index.js';
import { startController } from '../src/controller/controller.js';
import { ControlPlane, freePort } from '../src/devenv/control-plane.js';
import { installBase } from '../src/devenv/dev-stack.js';
import { KubeClient } from '../src/kube/client.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
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
  const plane = new ControlPlane({ dir: join(work, 'plane') });
  await plane.start();
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  await installBase(kc, ['default']);
  const client = await KubeClient.fromKubeConfig(kc);
  const runner = new PodRunner({ kubeConfig: kc, dir: join(work, 'runner'), log: createLogger('runner', 'warn') });
  await runner.start();
  const port = await freePort();
  const controller = await startController({
    kubeConfig: kc,
    metricsPort: port,
    metricsHost: '127.0.0.1',
    log: createLogger('controller', 'warn'),
  });
  const writes = async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('plugflow_controller_api_writes_total{'))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };
  /** Runs `count` workflows one after the other: writes per workflow and each one's create → Succeeded ms. */
  const runMany = async (prefix: string): Promise<{ writes: number; ms: number[] }> => {
    const before = await writes();
    const ms: number[] = [];
    for (let i = 0; i < count; i++) {
      const name = `${prefix}-${i}`;
      const t0 = performance.now();
      await client.create(WORKFLOWS, 'default', memoized(name, i));
      for (;;) {
        const wf = await client.get<Workflow>(WORKFLOWS, 'default', name);
        if (wf.status?.phase === 'Succeeded') break;
        if (wf.status?.phase === 'Failed' || wf.status?.phase === 'Error') throw new Error(`${name}: ${wf.status.message}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      ms.push(performance.now() - t0);
    }
    await new Promise((r) => setTimeout(r, 2_000)); // trailing writes (labels, Events, the cache entry)
    return { writes: ((await writes()) - before) / count, ms };
  };
  try {
    const ran = await runMany('run'); // every key new: the step runs and its entry is stored
    const hit = await runMany('hit'); // the same keys again: answered from the cache
    return [
      {
        name: 'memoize hit: controller API writes per 1-step workflow',
        value: Number(hit.writes.toFixed(1)),
        unit: 'writes',
        goal: '< the same workflow running its step',
        met: hit.writes < ran.writes,
        note: `running the step (and storing the entry): ${ran.writes.toFixed(1)} writes; ${count} workflows each, one after the other`,
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
    await controller.stop();
    await runner.stop(1);
    await client.close();
    await plane.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  writeFiguresSection('memoize', 'Memoize (`npx tsx bench/memoize-bench.ts`; also part of `make bench`)', await runMemoizeBench(), t0);
}
