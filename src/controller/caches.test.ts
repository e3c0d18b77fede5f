/**
 * The controller's caches against the in-memory client: readiness (synced, stale), the overlay of
 * this controller's own writes until the watch catches up, pods by workflow, slimmed objects and
 * the single-namespace namespace informer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import winston from 'winston';
import { LABEL_WORKFLOW, storedStatus, type Workflow, type WorkflowTaskSet } from '../api/index.js';
import type { KubeObject } from '../kube/object-store.js';
import { NAMESPACES, PODS, WORKFLOWS, WORKFLOW_TASK_SETS } from '../kube/resource.js';
import { eventually } from '../kube/testing/eventually.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { ControllerCaches, isNewer, type CacheOptions } from './caches.js';

type Wf = Workflow & KubeObject;
const log = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });

const running: ControllerCaches[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function synced(fake: FakeKubeClient, o: Partial<CacheOptions> = {}): Promise<ControllerCaches> {
  const caches = new ControllerCaches({ client: fake.asClient(), namespace: 'ns', resyncMs: 0, watchdogMs: 60_000, log, ...o });
  running.push(caches);
  caches.start();
  await caches.waitForSync();
  await eventually(() => fake.openWatches === caches.informers().length);
  return caches;
}

function cluster(): FakeKubeClient {
  const fake = new FakeKubeClient();
  fake.seed(NAMESPACES, { metadata: { name: 'ns', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } });
  fake.seed(NAMESPACES, { metadata: { name: 'other' } });
  fake.seed(WORKFLOWS, { metadata: { name: 'w', namespace: 'ns' }, spec: { entrypoint: 'main', templates: [] } });
  return fake;
}

const withRv = <T extends KubeObject>(obj: T, rv: string): T => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: rv } });

describe('ControllerCaches', () => {
  it('is not ready before every informer synced, ready after, and stale after a silence longer than staleMs', async () => {
    const fake = cluster();
    const caches = new ControllerCaches({ client: fake.asClient(), namespace: 'ns', resyncMs: 0, watchdogMs: 60_000, staleMs: 40, log });
    running.push(caches);
    expect(caches.readinessProblems()).toContain('informer workflows has not synced yet');
    expect(caches.readinessProblems()).toHaveLength(9);
    caches.start();
    await caches.waitForSync();
    expect(caches.hasSynced()).toBe(true);
    expect(caches.readinessProblems()).toEqual([]);
    await eventually(() => caches.readinessProblems().length === 9);
    expect(caches.readinessProblems()[0]).toMatch(/^informer workflows is stale: nothing heard from the API server for \d+s$/);
    fake.bookmark(); // every watch hears something again
    expect(caches.readinessProblems()).toEqual([]);
  });

  it('serves its own newer write of a workflow until the watch delivers that version, then the cache again', async () => {
    const fake = cluster();
    const caches = await synced(fake);
    const cached = caches.workflow('ns', 'w')!;
    // The reply of a status write the watch has not delivered yet: the next resourceVersion.
    const next = String(Number(fake.resourceVersion) + 1);
    const mine: Wf = withRv({ ...cached, status: { phase: 'Running' as const } }, next);
    caches.rememberWorkflow(mine);
    expect(caches.workflow('ns', 'w')).toEqual(mine);
    // An older copy does not replace what the cache has.
    caches.rememberWorkflow(withRv(cached, '1'));
    expect(caches.workflow('ns', 'w')?.metadata?.resourceVersion).toBe(cached.metadata?.resourceVersion);
    caches.rememberWorkflow(mine);
    await fake.mergePatch(WORKFLOWS, 'ns', 'w', { status: { phase: 'Running' } });
    expect(caches.workflows.get('ns', 'w')?.metadata?.resourceVersion).toBe(next);
    // Caught up: a later change by someone else shows at once.
    await fake.mergePatch(WORKFLOWS, 'ns', 'w', { metadata: { labels: { x: 'y' } } });
    expect(caches.workflow('ns', 'w')?.metadata?.labels).toEqual({ x: 'y' });
  });

  it('shapes a remembered write as the informer shapes what it caches: nodes inflated, peer names canonical', async () => {
    const fake = cluster();
    const caches = await synced(fake);
    const cached = caches.workflow('ns', 'w')!;
    const nodes = { w: { id: 'w', name: 'w', displayName: 'w', type: 'Steps' as const, phase: 'Running' as const } };
    // A label patch's reply: the object as stored, nodes compressed (any large workflow).
    const labelled = withRv(
      {
        ...cached,
        spec: {
          entrypoint: 'main',
          templates: [{ name: 'main', container: { image: 'a' }, outputs: { artifacts: [{ name: 'x', s3: { key: 'k' } }] } }],
        },
        status: storedStatus({ phase: 'Running', nodes }, 0),
      } as unknown as Wf,
      String(Number(fake.resourceVersion) + 1),
    );
    expect(labelled.status?.compressedNodes).toBeTypeOf('string');
    caches.rememberWorkflow(labelled);
    const seen = caches.workflow('ns', 'w')!;
    expect(seen.status?.nodes).toEqual(nodes);
    expect(JSON.stringify(seen.spec)).not.toContain('"s3"');
  });

  it('forgets a workflow that is deleted from the cache, whatever it remembered', async () => {
    const fake = cluster();
    const caches = await synced(fake);
    caches.rememberWorkflow(withRv(caches.workflow('ns', 'w')!, '999999'));
    caches.expectStatus('ns', 'w', { phase: 'Running' });
    expect(caches.ownStatusOf(caches.workflow('ns', 'w')!)).toEqual({ phase: 'Running' });
    await fake.delete(WORKFLOWS, 'ns', 'w');
    expect(caches.workflow('ns', 'w')).toBeUndefined();
    caches.forget('ns', 'w');
    expect(caches.ownStatusOf({ metadata: { name: 'w', namespace: 'ns' } } as Wf)).toBeUndefined();
  });

  it('serves the TaskSet it created before the watch shows it', async () => {
    const fake = cluster();
    const caches = await synced(fake);
    const ts = { metadata: { name: 'w', namespace: 'ns', resourceVersion: '500' }, spec: { tasks: {} } } as WorkflowTaskSet & KubeObject;
    caches.rememberTaskSet(ts);
    expect(caches.taskSetOf('ns', 'w')).toEqual(ts);
    expect(caches.taskSets.get('ns', 'w')).toBeUndefined();
    fake.seed(WORKFLOW_TASK_SETS, { metadata: { name: 'w', namespace: 'ns' }, spec: { tasks: { a: { name: 'a' } } } });
    // The cached copy (a small resourceVersion) is older than the remembered one: still mine.
    expect(caches.taskSetOf('ns', 'w')).toEqual(ts);
  });

  it('finds pods by workflow through the index, follows relabels, and keeps pods slim (no spec, no managedFields)', async () => {
    const fake = cluster();
    const p = (name: string, wf: string) => ({
      metadata: { name, namespace: 'ns', labels: { [LABEL_WORKFLOW]: wf }, managedFields: [{ manager: 'x' }] },
      spec: { containers: [{ name: 'main', image: 'x' }] },
      status: { phase: 'Running' },
    });
    fake.seed(PODS, p('w-1', 'w'));
    fake.seed(PODS, p('w-2', 'w'));
    fake.seed(PODS, p('v-1', 'v'));
    fake.seed(PODS, { metadata: { name: 'unrelated', namespace: 'ns' } });
    const caches = await synced(fake);
    expect(
      caches
        .podsOf('ns', 'w')
        .map((x) => x.metadata?.name)
        .sort(),
    ).toEqual(['w-1', 'w-2']);
    expect(caches.pods.list()).toHaveLength(3);
    const cached = caches.pods.get('ns', 'w-1')!;
    expect(cached.spec).toBeUndefined();
    expect((cached.metadata as { managedFields?: unknown }).managedFields).toBeUndefined();
    expect(cached.status?.phase).toBe('Running');
    await fake.mergePatch(PODS, 'ns', 'w-2', { metadata: { labels: { [LABEL_WORKFLOW]: 'v' } } });
    expect(caches.podsOf('ns', 'w').map((x) => x.metadata?.name)).toEqual(['w-1']);
    expect(
      caches
        .podsOf('ns', 'v')
        .map((x) => x.metadata?.name)
        .sort(),
    ).toEqual(['v-1', 'w-2']);
  });

  it('watches only its own namespace object in a single-namespace install, with its labels', async () => {
    const fake = cluster();
    const caches = await synced(fake);
    expect(caches.namespaces.list().map((n) => n.metadata?.name)).toEqual(['ns']);
    expect(caches.namespaces.get(undefined, 'ns')?.metadata?.labels).toEqual({ 'pod-security.kubernetes.io/enforce': 'restricted' });
  });

  it('counts workflows by phase', async () => {
    const fake = cluster();
    fake.seed(WORKFLOWS, { metadata: { name: 'a', namespace: 'ns' }, spec: {}, status: { phase: 'Running' } });
    fake.seed(WORKFLOWS, { metadata: { name: 'b', namespace: 'ns' }, spec: {}, status: { phase: 'Running' } });
    fake.seed(WORKFLOWS, { metadata: { name: 'c', namespace: 'other' }, spec: {}, status: { phase: 'Failed' } });
    const caches = await synced(fake);
    expect(caches.workflowPhases()).toEqual({ '': 1, Running: 2 });
  });
});

describe('isNewer', () => {
  it('compares resourceVersions as integers, and claims nothing for opaque ones', () => {
    expect(isNewer({ metadata: { resourceVersion: '10' } }, { metadata: { resourceVersion: '9' } })).toBe(true);
    expect(isNewer({ metadata: { resourceVersion: '9' } }, { metadata: { resourceVersion: '10' } })).toBe(false);
    expect(isNewer({ metadata: { resourceVersion: '7' } }, { metadata: { resourceVersion: '7' } })).toBe(false);
    expect(isNewer({ metadata: { resourceVersion: 'b' } }, { metadata: { resourceVersion: 'a' } })).toBe(false);
    expect(
      isNewer({ metadata: { resourceVersion: '18446744073709551617' } }, { metadata: { resourceVersion: '18446744073709551616' } }),
    ).toBe(true);
  });
});
