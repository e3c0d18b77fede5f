/**
 * The pod cache by shard bucket against the in-memory client: the selector of a set of buckets,
 * and a change of buckets that never leaves a gap — the old cache answers until the new one has
 * listed, events of both reach the handlers, and `covers` turns true only once it holds a bucket;
 * pods made before buckets stay in sight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LABEL_SHARD_BUCKET, LABEL_WORKFLOW } from '../api/index.js';
import { Informer } from '../kube/informer.js';
import type { KubeObject } from '../kube/object-store.js';
import { PODS } from '../kube/resource.js';
import { eventually } from '../kube/testing/eventually.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { BucketedPods, podSelector, UNBUCKETED_SELECTOR, type PodBuckets } from './bucketed-pods.js';

const pod = (name: string, bucket?: number): KubeObject => ({
  metadata: {
    name,
    namespace: 'ns',
    labels: { [LABEL_WORKFLOW]: 'wf', ...(bucket === undefined ? {} : { [LABEL_SHARD_BUCKET]: String(bucket) }) },
  },
});

const running: BucketedPods<KubeObject>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});

function bucketed(fake: FakeKubeClient, buckets: PodBuckets) {
  const made: string[] = [];
  const pods = new BucketedPods<KubeObject>((labelSelector) => {
    made.push(labelSelector);
    return new Informer<KubeObject>({ client: fake, type: PODS, namespace: 'ns', labelSelector, resyncMs: 0 });
  }, buckets);
  const added: string[] = [];
  pods.addHandlers({ onAdd: (p) => added.push(p.metadata!.name!) });
  running.push(pods);
  return {
    pods,
    made,
    added,
    names: () =>
      pods
        .list()
        .map((p) => p.metadata!.name!)
        .sort(),
  };
}

/** A cluster with pods a, b and c in buckets 1, 2 and 3. */
function threePods(): FakeKubeClient {
  const fake = new FakeKubeClient();
  ['a', 'b', 'c'].forEach((name, i) => fake.seed(PODS, pod(name, i + 1)));
  return fake;
}

describe('BucketedPods', () => {
  it('selects every workflow pod, the pods of some buckets, or none', () => {
    expect(podSelector('all')).toBe(LABEL_WORKFLOW);
    expect(podSelector([3, 1])).toBe(`${LABEL_WORKFLOW},${LABEL_SHARD_BUCKET} in (3,1)`);
    expect(podSelector([])).toBe(`${LABEL_WORKFLOW},${LABEL_SHARD_BUCKET} in (none)`);
  });

  it('watches only its buckets, and pods without a bucket (made before buckets) too', async () => {
    const fake = threePods();
    fake.seed(PODS, pod('old'));
    const { pods, names } = bucketed(fake, [1, 3]);
    pods.start();
    await pods.waitForSync();
    expect(names()).toEqual(['a', 'c', 'old']);
    expect(pods.get('ns', 'old')?.metadata?.name).toBe('old');
    expect([pods.covers(1), pods.covers(2), pods.coversAll()]).toEqual([true, false, false]);
    fake.seed(PODS, pod('d', 2));
    fake.seed(PODS, pod('e', 3));
    await eventually(() => names().includes('e'));
    expect(names()).toEqual(['a', 'c', 'e', 'old']);
  });

  it('changes buckets without a gap: covers a gained bucket only once it has listed it, keeps the handlers and indexes', async () => {
    const fake = threePods();
    const { pods, made, added, names } = bucketed(fake, [1]);
    pods.addIndex('bucket', (p) => [p.metadata!.labels![LABEL_SHARD_BUCKET] ?? '']);
    pods.start();
    await pods.waitForSync();
    expect(names()).toEqual(['a']);
    const change = pods.watch([2, 3]);
    // Until the new cache has listed, the old one answers and the gained buckets are not covered.
    expect([pods.covers(1), pods.covers(2)]).toEqual([true, false]);
    await change;
    expect(names()).toEqual(['b', 'c']);
    expect([pods.covers(1), pods.covers(2), pods.covers(3)]).toEqual([false, true, true]);
    expect(pods.byIndex('bucket', '2').map((p) => p.metadata!.name)).toEqual(['b']);
    expect(added).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    // Events after the change come through the new watch.
    fake.seed(PODS, pod('f', 2));
    await eventually(() => names().includes('f'));
    // The coordinator watches everything (each pod listed once); the same set twice is no change.
    fake.seed(PODS, pod('old'));
    await pods.watch('all');
    expect(pods.coversAll()).toBe(true);
    expect(names()).toEqual(['a', 'b', 'c', 'f', 'old']);
    await pods.watch('all');
    expect(made).toEqual([podSelector([1]), UNBUCKETED_SELECTOR, podSelector([2, 3]), podSelector('all')]);
  });

  it('makes only the last of changes asked for meanwhile, and stops cleanly in the middle of one', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a', 1));
    const { pods, made } = bucketed(fake, []);
    pods.start();
    await pods.waitForSync();
    const first = pods.watch([1]);
    const second = pods.watch([2]);
    const third = pods.watch([1]);
    await Promise.all([first, second, third]);
    expect(pods.covers(1) && !pods.covers(2)).toBe(true);
    expect(made).toEqual([podSelector([]), UNBUCKETED_SELECTOR, podSelector([1])]);
    fake.failNext(100, 500, { verb: 'list' });
    const stuck = pods.watch([5]);
    await pods.stop();
    await stuck;
    expect(pods.covers(5)).toBe(false);
  });
});
