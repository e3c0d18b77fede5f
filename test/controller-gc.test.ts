/**
 * Workflow-level collection against the real API server, with the local pod runner as the
 * kubelet: spec.podGC deletes step pods per strategy, label selector and delay, never turning a
 * finished node to Error; spec.ttlStrategy deletes the finished workflow after its seconds, also
 * when the controller restarted in between (the time comes from status.finishedAt);
 * spec.volumeClaimTemplates claims exist before the pods and carry a file from one step to the
 * next, and are deleted per spec.volumeClaimGC; spec.podDisruptionBudget exists while the
 * workflow runs and is deleted when it ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { PERSISTENT_VOLUME_CLAIMS, POD_DISRUPTION_BUDGETS, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
const { log } = captureLogger();

type Meta = { metadata: { name?: string; labels?: Record<string, string>; deletionTimestamp?: string } };
const podsOf = async (wf: string) =>
  (await client.list<Meta>(PODS, { namespace: ns, labelSelector: `${LABEL_WORKFLOW}=${wf}` })).items.filter(
    (p) => !p.metadata.deletionTimestamp,
  );
const gone = async (type: typeof PODS, name: string): Promise<boolean> => {
  try {
    const o = await client.get<Meta>(type, ns, name);
    return o.metadata.deletionTimestamp !== undefined; // e.g. a claim held by its protection finalizer
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
};
const sh = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...extra,
  container: { image: 'alpine:3', command: ['sh', '-c', script] },
});
const start = () => startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });

let bed: RunnerBed;

beforeAll(async () => {
  bed = await startRunnerBed('gc');
  ({ ns, client } = bed);
  controller = await start();
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('spec.podGC', () => {
  it('OnPodSuccess deletes the pods that succeeded as they end and keeps the failed one; the nodes keep their results', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('gc-pod', {
        entrypoint: 'main',
        podGC: { strategy: 'OnPodSuccess' },
        templates: [
          { name: 'main', steps: [[{ name: 'ok', template: 'ok' }], [{ name: 'bad', template: 'bad' }]] },
          sh('ok', 'echo fine'),
          sh('bad', 'exit 3'),
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'gc-pod');
    expect(done.status?.phase).toBe('Failed');
    const nodes = Object.values(done.status?.nodes ?? {});
    expect(nodes.find((n) => n.displayName === 'ok')).toMatchObject({ phase: 'Succeeded', outputs: { result: 'fine' } });
    const left = await eventually(async () => {
      const pods = await podsOf('gc-pod');
      return pods.length === 1 ? pods : undefined;
    }, 'only the failed pod left');
    expect(left[0]!.metadata.name).toBe(nodes.find((n) => n.displayName === 'bad')!.podName);
    const after = await client.get<Workflow>(WORKFLOWS, ns, 'gc-pod');
    expect(Object.values(after.status?.nodes ?? {}).find((n) => n.displayName === 'ok')?.phase).toBe('Succeeded');
  });

  it('OnWorkflowCompletion with a label selector and a delay: matching pods go only after the delay, others stay', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('gc-wf', {
        entrypoint: 'main',
        podGC: {
          strategy: 'OnWorkflowCompletion',
          deleteDelayDuration: '6s',
          labelSelector: { matchExpressions: [{ key: 'keep', operator: 'DoesNotExist' }] },
        },
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'a', template: 'plain' },
                { name: 'b', template: 'kept' },
              ],
            ],
          },
          sh('plain', 'true'),
          sh('kept', 'true', { metadata: { labels: { keep: 'yes' } } }),
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'gc-wf');
    expect(done.status?.phase).toBe('Succeeded');
    const dueMs = Date.parse(done.status!.finishedAt!) + 6000;
    expect((await podsOf('gc-wf')).length).toBe(2);
    const left = await eventually(async () => {
      const pods = await podsOf('gc-wf');
      return pods.length === 1 ? pods : undefined;
    }, 'the unlabelled pod collected');
    // status.finishedAt has second precision: allow for its truncation.
    expect(Date.now()).toBeGreaterThanOrEqual(dueMs - 1000);
    expect(left[0]!.metadata.labels?.keep).toBe('yes');
  });
});

describe('volumeClaimTemplates and podDisruptionBudget', () => {
  it('creates the claim and the budget before the pods, shares a file through the claim, and deletes both on success', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('vol', {
        entrypoint: 'main',
        volumeClaimTemplates: [
          { metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
        ],
        podDisruptionBudget: { minAvailable: 1 },
        templates: [
          { name: 'main', steps: [[{ name: 'write', template: 'write' }], [{ name: 'read', template: 'read' }]] },
          {
            ...sh('write', 'echo shared > /work/f; sleep 2'),
            container: {
              image: 'alpine:3',
              command: ['sh', '-c', 'echo shared > /work/f; sleep 2'],
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            },
          },
          {
            name: 'read',
            container: { image: 'alpine:3', command: ['cat', '/work/f'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
          },
        ],
      }),
    );
    const pdb = await eventually(
      async () =>
        client.get<{ spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } } }>(
          POD_DISRUPTION_BUDGETS,
          ns,
          'vol',
        ),
      'the budget',
    );
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels[LABEL_WORKFLOW]).toBe('vol');
    const claim = await client.get<Meta & { metadata: { ownerReferences?: Array<{ name: string }> } }>(
      PERSISTENT_VOLUME_CLAIMS,
      ns,
      'vol-work',
    );
    expect(claim.metadata.ownerReferences?.[0]?.name).toBe('vol');
    const done = await waitForCompletion(client, ns, 'vol');
    expect(done.status?.phase).toBe('Succeeded');
    expect(Object.values(done.status?.nodes ?? {}).find((n) => n.displayName === 'read')?.outputs?.result).toBe('shared');
    await eventually(() => gone(POD_DISRUPTION_BUDGETS, 'vol'), 'the budget deleted');
    await eventually(() => gone(PERSISTENT_VOLUME_CLAIMS, 'vol-work'), 'the claim deleted');
  });

  it('keeps the claim of a failed workflow by default (OnWorkflowSuccess); the budget goes', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('vol-fail', {
        entrypoint: 'main',
        volumeClaimTemplates: [
          { metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
        ],
        podDisruptionBudget: { maxUnavailable: 0 },
        templates: [
          {
            name: 'main',
            container: { image: 'alpine:3', command: ['sh', '-c', 'exit 1'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
          },
        ],
      }),
    );
    expect((await waitForCompletion(client, ns, 'vol-fail')).status?.phase).toBe('Failed');
    await eventually(() => gone(POD_DISRUPTION_BUDGETS, 'vol-fail'), 'the budget deleted');
    expect(await gone(PERSISTENT_VOLUME_CLAIMS, 'vol-fail-work')).toBe(false);
  });
});

describe('spec.ttlStrategy', () => {
  it('deletes the finished workflow after secondsAfterSuccess, also across a controller restart', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('ttl', {
        entrypoint: 'main',
        ttlStrategy: { secondsAfterSuccess: 5, secondsAfterFailure: 0 },
        templates: [sh('main', 'true')],
      }),
    );
    const done = await waitForCompletion(client, ns, 'ttl');
    expect(done.status?.phase).toBe('Succeeded');
    const dueMs = Date.parse(done.status!.finishedAt!) + 5000;
    await controller.stop();
    controller = await start(); // nothing in memory carries the deadline over
    expect(await gone(WORKFLOWS, 'ttl')).toBe(false);
    await eventually(() => gone(WORKFLOWS, 'ttl'), 'the workflow deleted', 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(dueMs - 1000);
  });

  it('secondsAfterFailure 0 deletes a failed workflow at once', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('ttl-fail', {
        entrypoint: 'main',
        ttlStrategy: { secondsAfterFailure: 0, secondsAfterSuccess: 600 },
        templates: [sh('main', 'exit 1')],
      }),
    );
    await eventually(() => gone(WORKFLOWS, 'ttl-fail'), 'the failed workflow deleted', 60_000);
  });
});
