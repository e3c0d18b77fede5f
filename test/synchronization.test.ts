/**
 * Synchronization against the real API server, with the local pod runner as the kubelet:
 *
 * - 50 workflows go through one mutex and one semaphore of 3 while the controller process is
 *   killed (SIGKILL) in the middle and a new one takes over; every step prints the nanosecond
 *   clock when it starts and ends, and from those timestamps the test proves that no two steps
 *   ever held the mutex at once and no four the semaphore;
 * - a workflow waiting for a workflow-level mutex is Pending with a message naming the lock and
 *   its holder, and the status lists the lock as waited for; deleting the holder hands it over;
 * - raising a semaphore's limit in its ConfigMap admits a waiter without anything else changing;
 * - a semaphore whose ConfigMap does not exist fails the workflow naming the field and the ConfigMap;
 *   one naming a key that is not a limit says so without a byte of the value.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, WORKFLOWS } from '../src/kube/resource.js';
import { readYamlDocuments } from '../src/yaml/kube-yaml.js';
import {
  captureLogger,
  eventually,
  spawnControllerProcess,
  startRunnerBed,
  waitForCompletion,
  workflow,
  type RunnerBed,
} from './controller-harness.js';
import { adminKubeConfig, cluster } from './support/cluster.js';

const REPO = resolve(import.meta.dirname, '..');
let ns: string;
let client: KubeClient;
let bed: RunnerBed;

/** A script step that prints `<start ns> <end ns>` of its own run and sleeps `seconds` between. */
function timed(name: string, seconds: number, extra: Partial<Template> = {}): Template {
  return {
    name,
    ...extra,
    script: { image: 'alpine:3', command: ['sh'], source: `s=$(date +%s%N); sleep ${seconds}; e=$(date +%s%N); echo "$s $e"` },
  };
}

/** Most intervals open at one instant. */
function maxOverlap(intervals: [bigint, bigint][]): number {
  const edges = intervals.flatMap(([s, e]): [bigint, number][] => [
    [s, 1],
    [e, -1],
  ]);
  // At equal times an end comes before a start: a hand-over at one instant is not an overlap.
  edges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]));
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  return most;
}

/** `<start ns> <end ns>` as a step printed it. */
function timestamps(result: string | undefined): [bigint, bigint] {
  const [s, e] = String(result ?? '')
    .trim()
    .split(' ');
  if (!s || !e) throw new Error(`no timestamps in ${JSON.stringify(result)}`);
  return [BigInt(s), BigInt(e)];
}

function intervalsOf(wfs: Workflow[], display: string): [bigint, bigint][] {
  return wfs.map((wf) => timestamps(Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === display)?.outputs?.result));
}

async function setLimit(value: string): Promise<void> {
  const cm: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'limits', namespace: ns },
    data: { db: '3', slow: value },
  };
  try {
    const old = await client.get<V1ConfigMap>(CONFIGMAPS, ns, 'limits');
    await client.replace(CONFIGMAPS, ns, 'limits', { ...old, data: cm.data });
  } catch {
    await client.create(CONFIGMAPS, ns, cm);
  }
}

beforeAll(async () => {
  bed = await startRunnerBed('sync');
  ({ ns, client } = bed);
  await setLimit('0');
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

describe('synchronization', () => {
  it('50 workflows through a mutex and a semaphore of 3, with the controller killed midway: the limits hold throughout', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `sync-${String(i).padStart(2, '0')}`);
    const spec = (): Workflow['spec'] => ({
      entrypoint: 'main',
      templates: [
        { name: 'main', steps: [[{ name: 'exclusive', template: 'exclusive' }], [{ name: 'shared', template: 'shared' }]] },
        timed('exclusive', 0.2, { synchronization: { mutex: { name: 'db' } } }),
        timed('shared', 1.5, { synchronization: { semaphore: { configMapKeyRef: { name: 'limits', key: 'db' } } } }),
      ],
    });
    for (const n of names) await client.create(WORKFLOWS, ns, workflow(n, spec()));

    // The first controller is a process of its own, so that it can really be killed.
    const { child: first, stderr: firstErr } = spawnControllerProcess(cluster().kubeconfigPath, ns);
    const done = async (display: string) => {
      const list = await client.list<Workflow>(WORKFLOWS, { namespace: ns });
      return list.items.filter((wf) =>
        Object.values(wf.status?.nodes ?? {}).some((n) => n.displayName === display && n.phase === 'Succeeded'),
      ).length;
    };
    try {
      await eventually(
        async () => ((await done('exclusive')) >= 12 ? true : undefined),
        'a dozen mutex holders done under the first controller',
        120_000,
      );
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    }
    // Killed in the middle: some workflows still wait for the mutex, with the lock in their status.
    const midway = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
    expect(midway.filter((wf) => wf.status?.phase === 'Succeeded').length, firstErr()).toBeLessThan(40);
    expect(midway.some((wf) => wf.status?.synchronization?.mutex?.waiting?.[0]?.mutex === `${ns}/Mutex/db`)).toBe(true);

    const { log } = captureLogger();
    const second = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, recordEvents: false, processMetrics: false, log });
    let finished: Workflow[];
    try {
      finished = await Promise.all(names.map((n) => waitForCompletion(client, ns, n, 240_000)));
    } finally {
      await second.stop();
    }
    expect(finished.map((wf) => `${wf.metadata?.name} ${wf.status?.phase}`)).toEqual(names.map((n) => `${n} Succeeded`));
    expect(maxOverlap(intervalsOf(finished, 'exclusive'))).toBe(1);
    const shared = maxOverlap(intervalsOf(finished, 'shared'));
    expect(shared).toBeLessThanOrEqual(3);
    // The semaphore really was contended (else the bound above would prove nothing).
    expect(shared).toBeGreaterThanOrEqual(2);
    // Nothing is held once everything has ended.
    expect(finished.filter((wf) => wf.status?.synchronization !== undefined).map((wf) => wf.metadata?.name)).toEqual([]);
  }, 600_000);

  describe('with a controller running', () => {
    let controller: RunningController;
    beforeAll(async () => {
      controller = await startController({
        kubeConfig: adminKubeConfig(),
        namespace: ns,
        metricsPort: 0,
        recordEvents: false,
        log: captureLogger().log,
      });
    });
    afterAll(async () => {
      await controller?.stop();
    });

    it('a workflow waiting for a workflow-level mutex is Pending naming the lock and its holder; deleting the holder hands it over', async () => {
      const locked = (name: string): Workflow =>
        workflow(name, { entrypoint: 'main', synchronization: { mutex: { name: 'whole' } }, templates: [timed('main', 600)] });
      await client.create(WORKFLOWS, ns, locked('holder'));
      await eventually(
        async () => ((await client.get<Workflow>(WORKFLOWS, ns, 'holder')).status?.phase === 'Running' ? true : undefined),
        'holder running',
      );
      await client.create(WORKFLOWS, ns, locked('waiter'));
      const waiting = await eventually(async () => {
        const wf = await client.get<Workflow>(WORKFLOWS, ns, 'waiter');
        return wf.status?.phase === 'Pending' && wf.status.message ? wf : undefined;
      }, 'waiter pending');
      expect(waiting.status?.message).toBe(`Waiting for lock ${ns}/Mutex/whole (held by ${ns}/holder)`);
      expect(waiting.status?.synchronization).toEqual({ mutex: { waiting: [{ mutex: `${ns}/Mutex/whole`, holder: `${ns}/holder` }] } });
      expect((await client.get<Workflow>(WORKFLOWS, ns, 'holder')).status?.synchronization).toEqual({
        mutex: { holding: [{ mutex: `${ns}/Mutex/whole`, holder: `${ns}/holder` }] },
      });

      await client.delete(WORKFLOWS, ns, 'holder');
      const running = await eventually(async () => {
        const wf = await client.get<Workflow>(WORKFLOWS, ns, 'waiter');
        return wf.status?.phase === 'Running' ? wf : undefined;
      }, 'waiter running after the holder was deleted');
      expect(running.status?.synchronization?.mutex?.holding).toEqual([{ mutex: `${ns}/Mutex/whole`, holder: `${ns}/waiter` }]);
      await client.delete(WORKFLOWS, ns, 'waiter');
    }, 120_000);

    it("raising a semaphore's limit in its ConfigMap admits the waiter", async () => {
      await setLimit('0');
      await client.create(
        WORKFLOWS,
        ns,
        workflow('gated', {
          entrypoint: 'main',
          templates: [timed('main', 0, { synchronization: { semaphore: { configMapKeyRef: { name: 'limits', key: 'slow' } } } })],
        }),
      );
      const waiting = await eventually(async () => {
        const wf = await client.get<Workflow>(WORKFLOWS, ns, 'gated');
        return Object.values(wf.status?.nodes ?? {})[0]?.message?.startsWith('Waiting for lock') ? wf : undefined;
      }, 'gated waiting');
      expect(Object.values(waiting.status?.nodes ?? {})[0]?.message).toBe(`Waiting for lock ${ns}/ConfigMap/limits/slow (limit 0, queued)`);
      await setLimit('1');
      expect((await waitForCompletion(client, ns, 'gated', 60_000)).status?.phase).toBe('Succeeded');
    }, 120_000);

    it('runs the examples in examples/synchronization: the limits they name hold', async () => {
      const read = (f: string) =>
        readYamlDocuments(readFileSync(join(REPO, 'examples/synchronization', f), 'utf8'), f)[0] as Record<string, unknown>;
      await client.create(CONFIGMAPS, ns, read('limits.yaml'));
      const submit = async (f: string) => (await client.create<Workflow>(WORKFLOWS, ns, read(f))).metadata!.name!;
      const [deployA, deployB, reports, writers] = [
        await submit('mutex-workflow.yaml'),
        await submit('mutex-workflow.yaml'),
        await submit('semaphore-template.yaml'),
        await submit('mutex-template.yaml'),
      ];
      const done = await Promise.all([deployA, deployB, reports, writers].map((n) => waitForCompletion(client, ns, n, 120_000)));
      expect(done.map((wf) => wf.status?.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']);
      // The workflow-level mutex: the second deploy started after the first ended.
      const [a, b] = done.slice(0, 2).sort((x, y) => Date.parse(x.status!.startedAt!) - Date.parse(y.status!.startedAt!));
      expect(Date.parse(b!.status!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(a!.status!.finishedAt!));
      // The semaphore of 2 over six reports (each runs 3 s: two admitted together overlap even when
      // their pods start a second or two apart on a busy machine).
      const reportRuns = Object.values(done[2]!.status!.nodes!).filter((n) => n.templateName === 'report');
      expect(reportRuns).toHaveLength(6);
      expect(maxOverlap(reportRuns.map((n) => timestamps(n.outputs?.result)))).toBe(2);
      // The mutex named from the input: the two "orders" writers took turns, "invoices" ran beside one.
      const run = (display: string) =>
        timestamps(Object.values(done[3]!.status!.nodes!).find((n) => n.displayName === display)?.outputs?.result);
      expect(maxOverlap([run('orders-a'), run('orders-b')])).toBe(1);
      expect(maxOverlap([run('orders-a'), run('orders-b'), run('invoices')])).toBe(2);
    }, 180_000);

    it('a semaphore whose ConfigMap does not exist fails the step, naming the field and the ConfigMap', async () => {
      await client.create(
        WORKFLOWS,
        ns,
        workflow('no-limits', {
          entrypoint: 'main',
          templates: [timed('main', 0, { synchronization: { semaphore: { configMapKeyRef: { name: 'nowhere', key: 'k' } } } })],
        }),
      );
      const wf = await waitForCompletion(client, ns, 'no-limits', 60_000);
      expect(wf.status?.phase).toBe('Error');
      expect(Object.values(wf.status?.nodes ?? {})[0]?.message).toBe(
        `spec.templates[main].synchronization.semaphore: ConfigMap ${ns}/nowhere, which holds the semaphore's limit, does not exist`,
      );
    }, 120_000);

    it('a semaphore naming a key that is not a limit says so without showing the value (the controller read it, not the step)', async () => {
      await client.create(CONFIGMAPS, ns, { metadata: { name: 'app-config' }, data: { token: 'hunter2-SECRET-value-that-must-not-leak' } });
      await client.create(
        WORKFLOWS,
        ns,
        workflow('peek', {
          entrypoint: 'main',
          templates: [timed('main', 0, { synchronization: { semaphore: { configMapKeyRef: { name: 'app-config', key: 'token' } } } })],
        }),
      );
      const wf = await waitForCompletion(client, ns, 'peek', 60_000);
      const text = JSON.stringify(wf.status);
      expect(text).toContain(`ConfigMap ${ns}/app-config key \\"token\\" does not hold a whole number of holders`);
      expect(text).not.toContain('hunter2');
    }, 120_000);
  });
});
