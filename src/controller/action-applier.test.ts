/**
 * The applier's decisions against the in-memory client: AlreadyExists counts as created, the
 * uid precondition keeps a newer pod of the same name alive, expectations save repeated writes,
 * a permanent refusal fails the node once while a transient one is retried, and TaskSet writes
 * are one create or one merge patch of what differs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import winston from 'winston';
import { LABEL_WORKFLOW, type Template, type Workflow, type WorkflowTaskSet } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/object-store.js';
import { NAMESPACES, PODS, SERVICE_ACCOUNTS, WORKFLOWS, WORKFLOW_TASK_SETS } from '../kube/resource.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { agentPodName } from '../pods/agent-pod.js';
import { ResourceRunner } from './resource-runner.js';
import { PodInputs } from './pod-inputs.js';
import { ArtifactRepositories } from './artifact-repositories.js';
import { ActionApplier } from './action-applier.js';
import { ControllerCaches } from './caches.js';
import { Expectations, FailureMemory } from './failure-memory.js';
import { ControllerMetrics } from './metrics.js';

const log = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });
const AGENT_ACCOUNT = 'plugflow-agent';
const main: Template = { name: 'main', container: { image: 'alpine:3', command: ['true'] } };
const createPod = (podName: string): EngineAction => ({ kind: 'createPod', nodeId: `node-${podName}`, podName, template: main });
const deletePod = (podName: string): EngineAction => ({ kind: 'deletePod', podName, reason: 'test' });
const stepPod = (name: string): KubeObject => ({ metadata: { name, namespace: 'ns', labels: { [LABEL_WORKFLOW]: 'w' } } });

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

/** A fake cluster with namespace `ns`, the agent's account and workflow `w`; caches synced. */
async function harness(seed: (fake: FakeKubeClient) => void = () => {}) {
  const fake = new FakeKubeClient();
  fake.seed(NAMESPACES, { metadata: { name: 'ns', labels: {} } });
  fake.seed(SERVICE_ACCOUNTS, { metadata: { name: AGENT_ACCOUNT, namespace: 'ns' } });
  const wf = fake.seed<Workflow & KubeObject>(WORKFLOWS, {
    metadata: { name: 'w', namespace: 'ns' },
    spec: { entrypoint: 'main', templates: [main] },
  });
  seed(fake);
  const caches = new ControllerCaches({ client: fake.asClient(), namespace: 'ns', resyncMs: 0, watchdogMs: 60_000, log });
  caches.start();
  stops.push(() => caches.stop());
  await caches.waitForSync();
  const failures = new FailureMemory();
  const creations = new Expectations();
  const deletions = new Expectations();
  const podInputs = new PodInputs({
    caches,
    failures,
    creations,
    repositories: new ArtifactRepositories(fake.asClient(), 'plugflow'),
  });
  const applier = new ActionApplier({
    resources: new ResourceRunner({ client: fake.asClient(), log, enqueue: () => undefined }),
    client: fake.asClient(),
    caches,
    failures,
    creations,
    deletions,
    metrics: new ControllerMetrics({ processMetrics: false }),
    log,
    executorImage: 'plugflow:test',
    agent: { image: 'plugflow:test', serviceAccountName: AGENT_ACCOUNT },
    podSecurityLevel: 'baseline',
    pluginsEnabled: false,
    pluginsFor: () => [],
    podInputs,
  });
  fake.calls.length = 0;
  /** What a reconcile does: the pods' lookups before the status is written, then the actions. */
  const apply = async (w: typeof wf, actions: EngineAction[]) => {
    await podInputs.prepare(w, actions);
    return applier.apply(w, actions);
  };
  return { fake, caches, failures, creations, deletions, applier, apply, podInputs, wf, uid: wf.metadata!.uid! };
}

/** A step whose output needs the workflow's artifact repository, which names a missing ConfigMap. */
const storing: Template = {
  name: 'store',
  container: { image: 'alpine:3', command: ['true'] },
  outputs: { artifacts: [{ name: 'out', path: '/tmp/out' }] },
};
const withMissingRepository = (wf: Workflow & KubeObject): Workflow & KubeObject => ({
  ...wf,
  spec: { ...wf.spec, artifactRepositoryRef: { configMap: 'nowhere' } },
});

describe('PodInputs: the lookups a pod needs, before the status is written', () => {
  it("records a failed lookup as the pod's create failure (the engine fails the node) and creates nothing", async () => {
    const h = await harness();
    const wf = withMissingRepository(h.wf);
    const action: EngineAction = { kind: 'createPod', nodeId: 'n-store', podName: 'w-store', template: storing };
    expect(await h.podInputs.prepare(wf, [action])).toBe(true);
    expect(h.failures.podFailures(h.uid)?.get('w-store')).toEqual({
      nodeId: 'n-store',
      message: 'artifacts: spec.artifactRepositoryRef: ConfigMap ns/nowhere does not exist',
    });
    expect(await h.applier.apply(wf, [action])).toEqual({ requeueNow: false });
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(0);
  });

  it('prepares a pod once, and drops what it prepared once the pod is created', async () => {
    const h = await harness();
    expect(await h.podInputs.prepare(h.wf, [createPod('w-1')])).toBe(false);
    expect(h.podInputs.of(h.wf, 'w-1')).toEqual({});
    await h.applier.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(1);
    expect(h.podInputs.of(h.wf, 'w-1')).toBeUndefined();
  });

  it('does not build a pod that was not prepared: the applier asks for the next reconcile at once', async () => {
    const h = await harness();
    expect(await h.applier.apply(h.wf, [createPod('w-1')])).toEqual({ requeueNow: true });
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(0);
  });

  it('starts afresh for a workflow recreated under the same name', async () => {
    const h = await harness();
    await h.podInputs.prepare(h.wf, [createPod('w-1')]);
    const again = { ...h.wf, metadata: { ...h.wf.metadata, uid: 'another-uid' } };
    expect(h.podInputs.of(again, 'w-1')).toBeUndefined();
  });
});

describe('ActionApplier: pods', () => {
  it('creates a step pod, and does not create it again while the cache has not shown it (expectation)', async () => {
    const h = await harness();
    await h.caches.stop(); // the watch will not deliver the new pod
    expect(await h.apply(h.wf, [createPod('w-1')])).toEqual({ requeueNow: false });
    expect(h.fake.peek(PODS, 'ns', 'w-1')).toBeDefined();
    await h.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(1);
    expect(h.creations.pending('ns/w-1')).toBe(true);
  });

  it('skips a pod the cache already holds', async () => {
    const h = await harness((fake) => fake.seed(PODS, stepPod('w-1')));
    await h.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.callsOf('create')).toHaveLength(0);
  });

  it('counts AlreadyExists as created (a restarted controller finds its pod) and fails nothing', async () => {
    const h = await harness();
    await h.caches.stop();
    h.fake.seed(PODS, stepPod('w-1')); // made by a previous incarnation; not in the cache
    expect(await h.apply(h.wf, [createPod('w-1')])).toEqual({ requeueNow: false });
    expect(h.fake.callsOf('create', 'pods').map((c) => c.code)).toEqual([409]);
    expect(h.failures.podFailures(h.uid)).toBeUndefined();
    await h.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(1); // expected now: no second try
  });

  it('remembers a permanent refusal as a failed pod, asks for a requeue and does not try again', async () => {
    const h = await harness();
    h.fake.failNext(1, 422, { verb: 'create', resource: 'pods' }, 'Pod "w-1" is invalid: spec.containers[0].image: Required value');
    expect(await h.apply(h.wf, [createPod('w-1')])).toEqual({ requeueNow: true });
    expect(h.failures.podFailures(h.uid)?.get('w-1')).toEqual({
      nodeId: 'node-w-1',
      message: expect.stringMatching(/^the pod was refused: .*422 Invalid: Pod "w-1" is invalid/),
    });
    await h.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.callsOf('create', 'pods')).toHaveLength(1);
  });

  it.each([
    [503, 'server trouble'],
    [429, 'throttled'],
    [403, 'pods "w-1" is forbidden: exceeded quota: compute-resources'],
  ])('throws a transient refusal (%i: %s) so the reconcile is retried, and creates the pod on the retry', async (code, message) => {
    const h = await harness();
    h.fake.failNext(1, code, { verb: 'create', resource: 'pods' }, message);
    await expect(h.apply(h.wf, [createPod('w-1')])).rejects.toSatisfy((e) => e instanceof ApiError && e.code === code);
    expect(h.failures.podFailures(h.uid)).toBeUndefined();
    expect(h.creations.pending('ns/w-1')).toBe(false);
    await h.apply(h.wf, [createPod('w-1')]);
    expect(h.fake.peek(PODS, 'ns', 'w-1')).toBeDefined();
  });

  it('treats a 403 that is not about quota as permanent', async () => {
    const h = await harness();
    h.fake.failNext(1, 403, { verb: 'create', resource: 'pods' }, 'pods "w-1" is forbidden: violates PodSecurity "restricted:latest"');
    expect(await h.apply(h.wf, [createPod('w-1')])).toEqual({ requeueNow: true });
    expect(h.failures.podFailures(h.uid)?.get('w-1')?.message).toMatch(/violates PodSecurity/);
  });

  it('deletes a pod with its uid as precondition, and never the newer pod that took its name', async () => {
    const h = await harness((fake) => fake.seed(PODS, stepPod('w-1')));
    const cachedUid = h.caches.pods.get('ns', 'w-1')!.metadata!.uid;
    await h.caches.stop(); // the cache still shows the old pod
    await h.fake.delete(PODS, 'ns', 'w-1');
    const newer = h.fake.seed<KubeObject>(PODS, stepPod('w-1'));
    h.fake.calls.length = 0;
    await h.apply(h.wf, [deletePod('w-1')]);
    const [del] = h.fake.callsOf('delete', 'pods');
    expect(del.body).toMatchObject({ uid: cachedUid });
    expect(del.code).toBe(409);
    expect(h.fake.peek<KubeObject>(PODS, 'ns', 'w-1')?.metadata?.uid).toBe(newer.metadata!.uid);
  });

  it('counts NotFound on delete as done, and does not delete the same pod twice while the deletion is expected', async () => {
    const h = await harness((fake) => fake.seed(PODS, stepPod('w-1')));
    await h.caches.stop();
    await h.fake.delete(PODS, 'ns', 'w-1');
    h.fake.calls.length = 0;
    await h.apply(h.wf, [deletePod('w-1')]);
    await h.apply(h.wf, [deletePod('w-1')]);
    expect(h.fake.callsOf('delete', 'pods').map((c) => c.code)).toEqual([404]);
  });

  it('forgets the expected deletion when the delete fails transiently, so the next reconcile tries again', async () => {
    const h = await harness((fake) => fake.seed(PODS, stepPod('w-1')));
    h.fake.failNext(1, 500, { verb: 'delete' });
    await expect(h.apply(h.wf, [deletePod('w-1')])).rejects.toBeInstanceOf(ApiError);
    await h.apply(h.wf, [deletePod('w-1')]);
    expect(h.fake.callsOf('delete', 'pods').map((c) => c.code)).toEqual([500, 200]);
    expect(h.fake.peek(PODS, 'ns', 'w-1')).toBeUndefined();
  });

  it('does not delete a pod that is gone from the cache or already terminating', async () => {
    const h = await harness((fake) =>
      fake.seed(PODS, { ...stepPod('w-2'), metadata: { ...stepPod('w-2').metadata, deletionTimestamp: '2024-01-01T00:00:00Z' } }),
    );
    await h.apply(h.wf, [deletePod('w-1'), deletePod('w-2')]);
    expect(h.fake.callsOf('delete')).toHaveLength(0);
  });
});

describe('ActionApplier: the TaskSet', () => {
  const http = (url: string): Template => ({ name: 'h', http: { url } });

  it('creates the TaskSet, owned by the workflow, with the tasks to write', async () => {
    const h = await harness();
    await h.apply(h.wf, [{ kind: 'writeTask', nodeId: 'n1', template: http('http://a') }]);
    const ts = h.fake.peek<WorkflowTaskSet & KubeObject>(WORKFLOW_TASK_SETS, 'ns', 'w')!;
    expect(ts.spec.tasks).toEqual({ n1: http('http://a') });
    expect((ts.metadata as { ownerReferences?: unknown[] }).ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Workflow', name: 'w', uid: h.uid, controller: true }),
    ]);
  });

  it('patches a TaskSet that exists but is not cached yet (AlreadyExists on create), instead of failing', async () => {
    const h = await harness();
    await h.caches.stop();
    h.fake.seed(WORKFLOW_TASK_SETS, { metadata: { name: 'w', namespace: 'ns' }, spec: { tasks: { n0: http('http://zero') } } });
    await h.apply(h.wf, [{ kind: 'writeTask', nodeId: 'n1', template: http('http://a') }]);
    expect(h.fake.callsOf('create').map((c) => c.code)).toEqual([409]);
    expect(h.fake.peek<WorkflowTaskSet>(WORKFLOW_TASK_SETS, 'ns', 'w')!.spec.tasks).toEqual({
      n0: http('http://zero'),
      n1: http('http://a'),
    });
  });

  it('sends one merge patch with only the entries that differ, and drops results of removed tasks from status', async () => {
    const h = await harness((fake) => {
      fake.seed(WORKFLOW_TASK_SETS, {
        metadata: { name: 'w', namespace: 'ns' },
        spec: { tasks: { same: http('http://s'), gone: http('http://g') } },
      });
      void fake.mergePatch(WORKFLOW_TASK_SETS, 'ns', 'w', { status: { nodes: { gone: { phase: 'Succeeded' } } } }, 'status');
    });
    await h.apply(h.wf, [
      { kind: 'writeTask', nodeId: 'same', template: http('http://s') },
      { kind: 'writeTask', nodeId: 'new', template: http('http://n') },
      { kind: 'removeTask', nodeId: 'gone' },
    ]);
    const patches = h.fake.callsOf('patch');
    expect(patches.map((c) => [c.subresource, c.body])).toEqual([
      [undefined, { spec: { tasks: { new: http('http://n'), gone: null } } }],
      ['status', { status: { nodes: { gone: null } } }],
    ]);
    const ts = h.fake.peek<WorkflowTaskSet>(WORKFLOW_TASK_SETS, 'ns', 'w')!;
    expect(Object.keys(ts.spec.tasks ?? {}).sort()).toEqual(['new', 'same']);
    expect(ts.status?.nodes).toEqual({});
  });

  it('writes nothing when every task is already as wanted', async () => {
    const h = await harness((fake) =>
      fake.seed(WORKFLOW_TASK_SETS, { metadata: { name: 'w', namespace: 'ns' }, spec: { tasks: { same: http('http://s') } } }),
    );
    await h.apply(h.wf, [{ kind: 'writeTask', nodeId: 'same', template: http('http://s') }]);
    expect(h.fake.calls.filter((c) => c.verb !== 'watch' && c.verb !== 'list')).toEqual([]);
  });
});

describe('ActionApplier: the agent pod', () => {
  it('counts AlreadyExists on the agent pod as created', async () => {
    const h = await harness();
    await h.caches.stop();
    h.fake.seed(PODS, stepPod(agentPodName('w')));
    expect(await h.apply(h.wf, [{ kind: 'ensureAgent' }])).toEqual({ requeueNow: false });
    expect(h.fake.callsOf('create', 'pods').map((c) => c.code)).toEqual([409]);
    expect(h.failures.agentFailure(h.uid)).toBeUndefined();
    expect(h.creations.pending(`ns/${agentPodName('w')}`)).toBe(true);
  });

  it('reports a missing agent service account to the engine (permanent), naming the commands that fix it', async () => {
    const h = await harness();
    await h.fake.delete(SERVICE_ACCOUNTS, 'ns', AGENT_ACCOUNT);
    expect(await h.apply(h.wf, [{ kind: 'ensureAgent' }])).toEqual({ requeueNow: true });
    expect(h.failures.agentFailure(h.uid)).toMatch(
      /service account ns\/plugflow-agent, which the agent runs as, does not exist; create it .*kubectl create serviceaccount plugflow-agent -n ns/,
    );
    expect(h.fake.callsOf('create')).toHaveLength(0);
  });

  it('retries (throws) when the service account cannot be read for a transient reason, recording nothing', async () => {
    const h = await harness();
    h.fake.failNext(1, 503, { verb: 'get', resource: 'serviceaccounts' });
    await expect(h.apply(h.wf, [{ kind: 'ensureAgent' }])).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 503);
    expect(h.failures.agentFailure(h.uid)).toBeUndefined();
    await h.apply(h.wf, [{ kind: 'ensureAgent' }]);
    expect(h.fake.peek(PODS, 'ns', agentPodName('w'))).toBeDefined();
  });
});
