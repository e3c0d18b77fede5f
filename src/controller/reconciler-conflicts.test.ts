/**
 * The reconciler's status-write decisions against the in-memory client: a status written from a
 * stale copy is refused with 409 and the reconcile re-reads and re-runs the engine on the fresh
 * object (bounded by maxConflicts), a workflow deleted meanwhile ends the reconcile quietly, and
 * a status that changes nothing is not written. The engine is a stub: only the shell is tested.
 */
import { afterEach, describe, expect, it } from 'vitest';
import winston from 'winston';
import type { Workflow } from '../api/index.js';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/object-store.js';
import { NAMESPACES, WORKFLOWS } from '../kube/resource.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { ResourceRunner } from './resource-runner.js';
import { PodInputs } from './pod-inputs.js';
import { ActionApplier } from './action-applier.js';
import { ControllerCaches } from './caches.js';
import { Expectations, FailureMemory } from './failure-memory.js';
import { ControllerMetrics } from './metrics.js';
import { Reconciler, type Engine } from './reconciler.js';
import { EventRecorder } from '../kube/event-recorder.js';

type Wf = Workflow & KubeObject;
const log = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });

const running: ControllerCaches[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function harness(o: { maxConflicts?: number } = {}) {
  const fake = new FakeKubeClient();
  fake.seed(NAMESPACES, { metadata: { name: 'ns' } });
  fake.seed(WORKFLOWS, {
    metadata: { name: 'w', namespace: 'ns' },
    spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
  });
  const client = fake.asClient();
  const caches = new ControllerCaches({ client, namespace: 'ns', resyncMs: 0, watchdogMs: 60_000, log });
  running.push(caches);
  caches.start();
  await caches.waitForSync();
  const failures = new FailureMemory();
  const metrics = new ControllerMetrics({ processMetrics: false });
  const creations = new Expectations();
  const applier = new ActionApplier({
    resources: new ResourceRunner({ client: client, log, enqueue: () => undefined }),
    client,
    caches,
    failures,
    creations,
    deletions: new Expectations(),
    metrics,
    log,
    executorImage: 'plugflow:test',
    agent: { image: 'plugflow:test', serviceAccountName: 'plugflow-agent' },
    podSecurityLevel: 'baseline',
    pluginsEnabled: false,
    pluginsFor: () => [],
    podInputs: new PodInputs({ caches, failures, creations }),
  });
  /** Workflows the engine saw, by their resourceVersion and labels. */
  const seen: { rv?: string; labels?: Record<string, string> }[] = [];
  const engine: Engine = (wf) => {
    seen.push({ rv: (wf as Wf).metadata?.resourceVersion, labels: (wf as Wf).metadata?.labels });
    return { status: { ...wf.status, phase: 'Running', startedAt: '2024-01-01T00:00:00Z', nodes: {} }, actions: [] };
  };
  const reconciler = new Reconciler({
    client,
    caches,
    applier,
    failures,
    events: new EventRecorder({ client, log, component: 'plugflow-controller', instance: 'test', enabled: false }),
    metrics,
    log,
    engine,
    pluginsEnabled: false,
    ...o,
  });
  fake.calls.length = 0;
  return { fake, caches, reconciler, seen, metrics };
}

/** Patches of the workflow that carry a status (the Workflow CRD has no status subresource). */
const statusWrites = (fake: FakeKubeClient) =>
  fake.callsOf('patch', WORKFLOWS.plural + '.' + WORKFLOWS.group).filter((c) => (c.body as { status?: unknown } | undefined)?.status);

describe('Reconciler: status writes', () => {
  it('writes the status conditionally; on 409 it re-reads the workflow and runs the engine again on the fresh copy', async () => {
    const h = await harness();
    await h.caches.stop(); // the cache keeps the old copy
    await h.fake.mergePatch(WORKFLOWS, 'ns', 'w', { metadata: { labels: { team: 'a' } } }); // someone else writes
    await h.reconciler.reconcile('ns/w');
    expect(statusWrites(h.fake).map((c) => c.code)).toEqual([409, 200]);
    expect(h.fake.callsOf('get').map((c) => c.name)).toEqual(['w']);
    expect(h.seen).toHaveLength(2);
    expect(h.seen[1].labels).toMatchObject({ team: 'a' });
    const stored = h.fake.peek<Wf>(WORKFLOWS, 'ns', 'w')!;
    expect(stored.status?.phase).toBe('Running');
    expect(stored.metadata?.labels).toMatchObject({ team: 'a' });
    expect((await h.metrics.registry.getSingleMetric('plugflow_controller_status_conflicts_total')?.get())?.values[0]?.value).toBe(1);
  });

  it('gives up after maxConflicts conflicting writes, throwing the conflict so the work queue retries with backoff', async () => {
    const h = await harness({ maxConflicts: 2 });
    h.fake.failNext(3, 409, { verb: 'patch' }, 'the object has been modified');
    await expect(h.reconciler.reconcile('ns/w')).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 409);
    expect(statusWrites(h.fake)).toHaveLength(3);
    expect(h.fake.peek<Wf>(WORKFLOWS, 'ns', 'w')!.status).toBeUndefined();
  });

  it('ends quietly when the workflow was deleted while its status conflicted', async () => {
    const h = await harness();
    await h.caches.stop();
    await h.fake.delete(WORKFLOWS, 'ns', 'w');
    h.fake.seed(WORKFLOWS, { metadata: { name: 'other', namespace: 'ns' } }); // moves the resourceVersion on
    h.fake.failNext(1, 409, { verb: 'patch' });
    expect(await h.reconciler.reconcile('ns/w')).toEqual({});
    expect(h.fake.callsOf('get').map((c) => c.code)).toEqual([404]);
  });

  it('writes the status, the phase label and the finalizers it needs in one request: no write changes only labels', async () => {
    const h = await harness();
    await h.reconciler.reconcile('ns/w');
    const writes = h.fake.callsOf('patch', WORKFLOWS.plural + '.' + WORKFLOWS.group);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.subresource).toBeUndefined();
    expect(writes[0]!.body).toMatchObject({
      metadata: { resourceVersion: expect.any(String), labels: { 'workflows.plugflow.io/phase': 'Running' } },
      status: { phase: 'Running' },
    });
    expect(h.fake.peek<Wf>(WORKFLOWS, 'ns', 'w')!.metadata?.labels?.['workflows.plugflow.io/phase']).toBe('Running');
  });

  it('writes nothing when the engine returns the status already stored', async () => {
    const h = await harness();
    await h.reconciler.reconcile('ns/w');
    expect(statusWrites(h.fake)).toHaveLength(1);
    h.fake.calls.length = 0;
    await h.reconciler.reconcile('ns/w');
    expect(h.fake.calls.filter((c) => c.verb !== 'watch' && c.verb !== 'list')).toEqual([]);
  });
});
