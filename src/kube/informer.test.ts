/**
 * The informer's decisions against the in-memory client: paged list then watch, relist on 410
 * (as a watch ERROR event and as a refused watch), bookmarks moving the resourceVersion, resync,
 * the watchdog replacing a silent watch, retries of transient failures, and staleness for /readyz.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Informer, readinessProblem, type InformerOptions } from './informer.js';
import type { KubeObject } from './object-store.js';
import { CONFIGMAPS, PODS } from './resource.js';
import { FakeKubeClient } from './testing/fake-kube-client.js';
import { eventually } from './testing/eventually.js';

type Pod = KubeObject & { status?: { phase?: string } };

const pod = (name: string, phase = 'Pending', labels: Record<string, string> = { app: 'x' }): Pod => ({
  metadata: { name, namespace: 'ns', labels },
  status: { phase },
});

const running: Informer<Pod>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

function informer(fake: FakeKubeClient, o: Partial<InformerOptions<Pod>> = {}) {
  const events: string[] = [];
  const inf = new Informer<Pod>({
    client: fake,
    type: PODS,
    namespace: 'ns',
    resyncMs: 0,
    backoff: { initialMs: 1, maxMs: 5 },
    ...o,
  });
  inf.addHandlers({
    onAdd: (p) => events.push(`add ${p.metadata?.name}`),
    onUpdate: (old, p) => events.push(`${old === p ? 'resync' : 'update'} ${p.metadata?.name} ${p.status?.phase}`),
    onDelete: (p) => events.push(`delete ${p.metadata?.name}`),
  });
  running.push(inf);
  return { inf, events };
}

describe('Informer', () => {
  it('lists every page, then follows the watch from the list resourceVersion with bookmarks asked for', async () => {
    const fake = new FakeKubeClient();
    for (const n of ['a', 'b', 'c', 'd', 'e']) fake.seed(PODS, pod(n));
    fake.seed(PODS, pod('other', 'Pending', { app: 'y' }));
    const { inf, events } = informer(fake, { pageSize: 2, labelSelector: 'app=x' });
    expect(inf.lastSyncAge()).toBe(Infinity);
    inf.start();
    await inf.waitForSync();
    expect(
      inf
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(fake.callsOf('list')).toHaveLength(3);
    await eventually(() => fake.openWatches === 1);
    expect(fake.callsOf('watch')[0].body).toEqual({ resourceVersion: fake.resourceVersion, allowWatchBookmarks: true });

    await fake.mergePatch(PODS, 'ns', 'a', { status: { phase: 'Running' } }, 'status');
    await fake.delete(PODS, 'ns', 'b');
    fake.seed(PODS, pod('f'));
    await eventually(() => events.length === 8);
    expect(events.slice(5)).toEqual(['update a Running', 'delete b', 'add f']);
    expect(inf.get('ns', 'a')?.status?.phase).toBe('Running');
    expect(inf.get('ns', 'b')).toBeUndefined();
    expect(inf.stats).toMatchObject({ lists: 1, relistsOnGone: 0 });
  });

  it('relists when its resourceVersion expired (ERROR 410 on the watch), delivering what changed meanwhile', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    fake.seed(PODS, pod('b'));
    const { inf, events } = informer(fake, { watchdogMs: 60_000 });
    inf.start();
    await inf.waitForSync();
    await eventually(() => fake.openWatches === 1);
    // The watch ends; meanwhile b goes, c comes, and the server compacts its history.
    fake.closeWatches();
    await fake.delete(PODS, 'ns', 'b');
    fake.seed(PODS, pod('c'));
    fake.compact();
    await eventually(() => inf.stats.lists === 2 && fake.openWatches === 1);
    expect(inf.stats.relistsOnGone).toBe(1);
    expect(
      inf
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(events).toEqual(['add a', 'add b', 'add c', 'delete b']);
  });

  it('relists when the API server refuses the watch with 410 Gone, and re-watches after other watch failures without a relist', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    const failures: unknown[] = [];
    const { inf } = informer(fake, { onFailure: (e) => failures.push(e) });
    fake.failNext(1, 410, { verb: 'watch' });
    inf.start();
    await eventually(() => inf.stats.lists === 2 && fake.openWatches === 1);
    expect(inf.stats.relistsOnGone).toBe(1);

    fake.failNext(2, 500, { verb: 'watch' });
    fake.closeWatches();
    await eventually(() => fake.openWatches === 1 && inf.stats.watchErrors === 2);
    expect(inf.stats.lists).toBe(2);
    expect(failures.map((e) => (e as { code: number }).code)).toEqual([410, 500, 500]);
  });

  it('retries a failed first list (transient failures) and syncs once the server answers', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    const failures: unknown[] = [];
    const { inf } = informer(fake, { onFailure: (e) => failures.push(e) });
    fake.failNext(2, 503, { verb: 'list' });
    inf.start();
    await inf.waitForSync();
    expect(inf.hasSynced()).toBe(true);
    expect(failures).toHaveLength(2);
    expect(inf.list()).toHaveLength(1);
  });

  it('takes the resourceVersion of a bookmark, so a watch restarted after compaction needs no relist', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    const { inf, events } = informer(fake);
    inf.start();
    await inf.waitForSync();
    await eventually(() => fake.openWatches === 1);
    // Other resources move the shared resourceVersion; only the bookmark tells this watch.
    for (let i = 0; i < 3; i++) fake.seed(CONFIGMAPS, { metadata: { name: `cm${i}`, namespace: 'ns' } });
    fake.bookmark();
    fake.compact();
    fake.closeWatches();
    await eventually(() => fake.callsOf('watch').length === 2 && fake.openWatches === 1);
    expect(fake.callsOf('watch')[1].body).toMatchObject({ resourceVersion: fake.resourceVersion });
    expect(inf.stats).toMatchObject({ lists: 1, relistsOnGone: 0 });
    expect(events).toEqual(['add a']);
  });

  it('re-delivers every cached object as an update on resync', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    fake.seed(PODS, pod('b'));
    const { inf, events } = informer(fake, { resyncMs: 20 });
    inf.start();
    await inf.waitForSync();
    await eventually(() => events.filter((e) => e.startsWith('resync')).length >= 4);
    expect(events.slice(0, 4).sort()).toEqual(['add a', 'add b', 'resync a Pending', 'resync b Pending']);
    expect(fake.callsOf('list')).toHaveLength(1);
  });

  it('restarts a watch that stays silent longer than the watchdog allows, from where it was (no relist)', async () => {
    const fake = new FakeKubeClient();
    fake.seed(PODS, pod('a'));
    const { inf } = informer(fake, { watchdogMs: 80 });
    inf.start();
    await inf.waitForSync();
    await eventually(() => inf.stats.watchdogRestarts >= 1 && fake.callsOf('watch').length >= 2, 2000);
    expect(inf.stats.lists).toBe(1);
    const [first, second] = fake.callsOf('watch');
    expect(second.body).toEqual(first.body);
  });

  it('is not ready before its first list, and is stale for /readyz after a silence longer than staleMs; a bookmark is a sign of life', async () => {
    const fake = new FakeKubeClient();
    const { inf } = informer(fake);
    expect(readinessProblem('pods', inf, 50)).toBe('informer pods has not synced yet');
    inf.start();
    await inf.waitForSync();
    await eventually(() => fake.openWatches === 1);
    expect(readinessProblem('pods', inf, 50)).toBeUndefined();
    await eventually(() => readinessProblem('pods', inf, 50) !== undefined);
    expect(readinessProblem('pods', inf, 50)).toMatch(/^informer pods is stale: nothing heard from the API server for \d+s$/);
    fake.bookmark();
    expect(readinessProblem('pods', inf, 50)).toBeUndefined();
    expect(inf.lastSyncAge()).toBeLessThan(50);
  });
});
