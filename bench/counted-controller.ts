/**
 * What the benchmarks that count the controller's API writes share: a control plane of their own
 * with the base install, the local pod runner as the kubelet, a controller whose metrics
 * endpoint gives `plugflow_controller_api_writes_total`, and a loop that runs workflows one after
 * the other to Succeeded.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { join } from 'node:path';
import type { Workflow } from '../src/api/index.js';
import { startController } from '../src/controller/controller.js';
import { ControlPlane, freePort } from '../src/devenv/control-plane.js';
import { installBase } from '../src/devenv/dev-stack.js';
import { KubeClient } from '../src/kube/client.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';

export interface CountedController {
  client: KubeClient;
  /** The controller's API writes so far (all verbs and resources). */
  writes(): Promise<number>;
  /**
   * Creates each workflow in `default` and waits for it to succeed, one after the other; then
   * waits 2 s for trailing writes (labels, Events). Returns the writes per workflow and each
   * workflow's create → Succeeded time (ms, a client polling every 20 ms).
   */
  runEach(workflows: Workflow[]): Promise<{ writesPerWorkflow: number; ms: number[] }>;
  stop(): Promise<void>;
}

/** `prepare` runs once the base install is in, before the controller starts (Secrets, ConfigMaps). */
export async function startCountedController(work: string, prepare?: (client: KubeClient) => Promise<void>): Promise<CountedController> {
  const plane = new ControlPlane({ dir: join(work, 'plane') });
  await plane.start();
  const kc = new KubeConfig();
  kc.loadFromFile(plane.kubeconfigPath);
  await installBase(kc, ['default']);
  const client = await KubeClient.fromKubeConfig(kc);
  await prepare?.(client);
  const runner = new PodRunner({ kubeConfig: kc, dir: join(work, 'runner'), log: createLogger('runner', 'warn') });
  await runner.start();
  const port = await freePort();
  const controller = await startController({
    kubeConfig: kc,
    metricsPort: port,
    metricsHost: '127.0.0.1',
    metricsAuth: 'none', // a loopback port of the bench's own
    log: createLogger('controller', 'warn'),
  });
  const writes = async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('plugflow_controller_api_writes_total{'))
      .reduce((s, l) => s + Number(l.split(' ').pop()), 0);
  };
  return {
    client,
    writes,
    async runEach(workflows) {
      const before = await writes();
      const ms: number[] = [];
      for (const wf of workflows) {
        const name = wf.metadata.name!;
        const t0 = performance.now();
        await client.create(WORKFLOWS, 'default', wf);
        for (;;) {
          const got = await client.get<Workflow>(WORKFLOWS, 'default', name);
          if (got.status?.phase === 'Succeeded') break;
          if (got.status?.phase === 'Failed' || got.status?.phase === 'Error') throw new Error(`${name}: ${got.status.message}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        ms.push(performance.now() - t0);
      }
      await new Promise((r) => setTimeout(r, 2_000));
      return { writesPerWorkflow: ((await writes()) - before) / workflows.length, ms };
    },
    async stop() {
      await controller.stop();
      await runner.stop(1);
      await client.close();
      await plane.stop();
    },
  };
}
