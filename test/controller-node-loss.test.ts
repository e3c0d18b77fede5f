/**
 * A node lost in the middle of a workflow (src/controller/lost-nodes.ts), against the real API
 * server. The test is the lost node's kubelet: it registers a Node and renews its Lease in
 * kube-node-lease, binds the first attempts of two steps to it (their template names a scheduler
 * of the test's) and reports them Running — then stops renewing, as a dead kubelet does. Later
 * attempts are bound to the local pod runner, which runs them.
 *
 * - the step without retryStrategy ends in Error with a message naming the node, never stuck Running;
 * - the step with `retryStrategy: {limit: 2, retryPolicy: Always}` is retried on the live node and Succeeds;
 * - the lost node's pods are deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { NODE_LEASE_NAMESPACE } from '../src/controller/lost-nodes.js';
import { isNotFound } from '../src/kube/errors.js';
import { LEASES, NODES, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

const GHOST = `ghost-${process.pid}`;
const SCHEDULER = 'node-loss-test';

interface Pod {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { nodeName?: string; schedulerName?: string };
  status?: { phase?: string };
}

let bed: RunnerBed;
let controller: RunningController;
const microTime = () => new Date().toISOString().replace('Z', '000Z');

beforeAll(async () => {
  bed = await startRunnerBed('node-loss');
  await bed.client.create(NODES, undefined, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: GHOST, labels: { 'kubernetes.io/hostname': GHOST } },
  });
  await bed.client.mergePatch(
    NODES,
    undefined,
    GHOST,
    { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString() }] } },
    'status',
  );
  const { log } = captureLogger();
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: bed.ns,
    recordEvents: false,
    processMetrics: false,
    // Over the 10 s at which kubelets (and the local runner) renew their Leases.
    nodeGraceMs: 15_000,
    nodeCheckMs: 500,
    log,
  });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.client.delete(NODES, undefined, GHOST).catch(() => {});
  await bed?.client.delete(LEASES, NODE_LEASE_NAMESPACE, GHOST).catch(() => {});
  await bed?.stop();
});

describe('a node lost under running steps', () => {
  it('ends the steps there (Error naming the node) or retries them elsewhere, and deletes their pods', async () => {
    const { client, ns } = bed;
    const step = (extra: Partial<Template> = {}): Template => ({
      name: 'work',
      schedulerName: SCHEDULER,
      ...extra,
      script: { image: 'alpine:3', command: ['sh'], source: 'echo ran' },
    });
    await client.create(WORKFLOWS, ns, workflow('no-retry', { entrypoint: 'work', templates: [step()] }));
    await client.create(
      WORKFLOWS,
      ns,
      workflow('with-retry', {
        entrypoint: 'work',
        templates: [step({ retryStrategy: { limit: 2, retryPolicy: 'Always' } })],
      }),
    );

    // The kubelet of the ghost node: its Lease renewed while it lives.
    let ghostAlive = true;
    await client.create(LEASES, NODE_LEASE_NAMESPACE, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: GHOST, namespace: NODE_LEASE_NAMESPACE },
      spec: { holderIdentity: GHOST, leaseDurationSeconds: 40, renewTime: microTime() },
    });
    const renew = setInterval(() => {
      if (!ghostAlive) return;
      void client
        .get<{ spec: Record<string, unknown> }>(LEASES, NODE_LEASE_NAMESPACE, GHOST)
        .then((l) => client.replace(LEASES, NODE_LEASE_NAMESPACE, GHOST, { ...l, spec: { ...l.spec, renewTime: microTime() } }))
        .catch(() => {});
    }, 500);
    // The test's scheduler: first attempts go to the ghost (reported Running), later ones to the runner.
    const bound = new Map<string, string>();
    const ghostPods: string[] = [];
    const schedule = setInterval(() => {
      void (async () => {
        const pods = (await client.list<Pod>(PODS, { namespace: ns })).items;
        for (const p of pods) {
          if (p.spec.schedulerName !== SCHEDULER || p.spec.nodeName || bound.has(p.metadata.name)) continue;
          const node = ghostAlive ? GHOST : `runner-${ns}`;
          bound.set(p.metadata.name, node);
          await client.createSubresource(PODS, ns, p.metadata.name, 'binding', {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name: p.metadata.name, namespace: ns },
            target: { apiVersion: 'v1', kind: 'Node', name: node },
          });
          if (node !== GHOST) continue;
          ghostPods.push(p.metadata.name);
          const t = new Date().toISOString();
          await client.mergePatch(
            PODS,
            ns,
            p.metadata.name,
            {
              status: {
                phase: 'Running',
                startTime: t,
                containerStatuses: ['main', 'wait'].map((name) => ({
                  name,
                  image: 'ghost',
                  imageID: '',
                  ready: true,
                  restartCount: 0,
                  state: { running: { startedAt: t } },
                })),
              },
            },
            'status',
          );
        }
      })().catch(() => {});
    }, 300);

    try {
      // Both steps run on the ghost node.
      await eventually(async () => {
        const list = (await client.list<Workflow>(WORKFLOWS, { namespace: ns })).items;
        const running = list.filter((wf) => Object.values(wf.status?.nodes ?? {}).some((n) => n.type === 'Pod' && n.phase === 'Running'));
        return running.length === 2 ? true : undefined;
      }, 'both steps Running on the ghost node');
      expect(ghostPods.length).toBe(2);

      // The kubelet dies: its Lease is no longer renewed.
      ghostAlive = false;
      const [noRetry, withRetry] = await Promise.all([
        waitForCompletion(client, ns, 'no-retry', 60_000),
        waitForCompletion(client, ns, 'with-retry', 90_000),
      ]);

      const lostStep = Object.values(noRetry.status?.nodes ?? {}).find((n) => n.type === 'Pod')!;
      expect(noRetry.status?.phase).toBe('Error');
      expect(lostStep.phase).toBe('Error');
      expect(lostStep.message).toContain(`the kubelet of node "${GHOST}" stopped renewing its lease`);

      expect(withRetry.status?.phase, JSON.stringify(withRetry.status, null, 1)).toBe('Succeeded');
      const attempts = Object.values(withRetry.status?.nodes ?? {})
        .filter((n) => n.type === 'Pod')
        .sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? ''));
      expect(attempts.map((n) => n.phase)).toEqual(['Error', 'Succeeded']);
      expect(attempts[0]!.message).toContain(GHOST);
      expect(attempts[1]!.outputs?.result).toBe('ran');

      // The ghost's pods are gone (deleted with grace 0: no kubelet would ever confirm).
      await eventually(
        async () => {
          for (const name of ghostPods) {
            try {
              await client.get(PODS, ns, name);
              return undefined;
            } catch (err) {
              if (!isNotFound(err)) throw err;
            }
          }
          return true;
        },
        "the lost node's pods deleted",
        30_000,
      );
    } finally {
      clearInterval(renew);
      clearInterval(schedule);
    }
  }, 240_000);
});
