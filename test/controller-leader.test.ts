/**
 * Lease-based leader election against the real API server: one holder at a time, a clean stop
 * hands over at once, a leader that finds the lease taken steps down, and of two controllers
 * only the leader reconciles — the follower takes over when the leader stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../src/controller/controller.js';
import { LeaderElector } from '../src/controller/leader-election.js';
import { KubeClient } from '../src/kube/client.js';
import { LEASES, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, waitForCompletion, workflow } from './controller-harness.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

const fast = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 200 };

/** A workflow the controller finishes without any pod: its entrypoint does not exist. */
const broken = (name: string) =>
  workflow(name, { entrypoint: 'missing', templates: [{ name: 'main', container: { image: 'x', command: ['true'] } }] });

describe('leader election', () => {
  let client: KubeClient;
  let ns: string;
  const { log } = captureLogger();

  beforeAll(async () => {
    client = await KubeClient.fromKubeConfig(adminKubeConfig());
    ns = await createTestNamespace('ctl-leader');
  });
  afterAll(async () => {
    await client?.close();
    await deleteTestNamespace(ns);
  });

  it('lets one elector lead; a clean stop hands over without waiting for expiry', async () => {
    const a = new LeaderElector({ client, namespace: ns, name: 'l1', identity: 'a', ...fast, log });
    const b = new LeaderElector({ client, namespace: ns, name: 'l1', identity: 'b', ...fast, log });
    expect(await a.acquire(() => {})).toBe(true);
    let bLeads = false;
    const bWon = b.acquire(() => {}).then((won) => (bLeads = won));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(bLeads).toBe(false);
    expect(a.isLeader()).toBe(true);
    const t0 = Date.now();
    await a.stop();
    await bWon;
    expect(bLeads).toBe(true);
    expect(Date.now() - t0).toBeLessThan(fast.leaseDurationMs);
    const lease = await client.get<{ spec: { holderIdentity: string; leaseTransitions: number } }>(LEASES, ns, 'l1');
    expect(lease.spec.holderIdentity).toBe('b');
    expect(lease.spec.leaseTransitions).toBe(1);
    await b.stop();
  });

  it('steps down when it finds the lease held by someone else', async () => {
    const a = new LeaderElector({ client, namespace: ns, name: 'l2', identity: 'a', ...fast, log });
    let lost = false;
    expect(await a.acquire(() => (lost = true))).toBe(true);
    const lease = await client.get<{ metadata: object; spec: Record<string, unknown> }>(LEASES, ns, 'l2');
    lease.spec.holderIdentity = 'usurper';
    await client.replace(LEASES, ns, 'l2', lease);
    await eventually(() => lost, 'leadership lost', 10_000);
    expect(a.isLeader()).toBe(false);
    await a.stop();
  });

  it('runs only the leading controller; the follower takes over when the leader stops', async () => {
    const common = {
      kubeConfig: adminKubeConfig(),
      namespace: ns,
      installNamespace: ns,
      leaderElect: true,
      leaseName: 'ctl',
      ...fast,
      recordEvents: false,
      processMetrics: false,
      log,
    };
    const first = await startController({ ...common, identity: 'first' });
    await client.create(WORKFLOWS, ns, broken('wf-1'));
    expect((await waitForCompletion(client, ns, 'wf-1', 30_000)).status?.phase).toBe('Failed');
    const second = await startController({ ...common, identity: 'second' });
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const writesBefore = await second.metrics.totalWrites();
      expect(second.readinessProblems()).toEqual([]); // a follower is ready: it serves nothing yet
      await first.stop();
      await client.create(WORKFLOWS, ns, broken('wf-2'));
      expect((await waitForCompletion(client, ns, 'wf-2', 30_000)).status?.phase).toBe('Failed');
      expect(await second.metrics.totalWrites()).toBeGreaterThan(writesBefore);
      const lease = await client.get<{ spec: { holderIdentity: string } }>(LEASES, ns, 'ctl');
      expect(lease.spec.holderIdentity).toBe('second');
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});
