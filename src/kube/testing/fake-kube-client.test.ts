/**
 * The fake's own semantics, where the shells' tests rely on them matching the API server:
 * refusals, conditional writes, the status subresource, selectors, paging and watch replay.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, isAlreadyExists, isConflict, isNotFound } from '../errors.js';
import type { KubeObject } from '../object-store.js';
import { NAMESPACES, PODS } from '../resource.js';
import type { WatchEvent } from '../client.js';
import { FakeKubeClient } from './fake-kube-client.js';
import { matchesLabels } from './label-selector.js';

type Pod = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
const pod = (name: string, labels: Record<string, string> = {}): Pod => ({ metadata: { name, namespace: 'ns', labels }, spec: { a: 1 } });

describe('FakeKubeClient', () => {
  it('creates with a uid and a fresh resourceVersion, and refuses a second create with AlreadyExists', async () => {
    const fake = new FakeKubeClient();
    const made = await fake.create<Pod>(PODS, 'ns', pod('p'));
    expect(made.metadata).toMatchObject({
      name: 'p',
      namespace: 'ns',
      uid: expect.stringMatching(/^uid-/),
      resourceVersion: fake.resourceVersion,
    });
    const err = await fake.create(PODS, 'ns', pod('p')).catch((e: unknown) => e);
    expect(isAlreadyExists(err)).toBe(true);
    expect((err as ApiError).request).toBe('POST /api/v1/namespaces/ns/pods');
    expect(isNotFound(await fake.get(PODS, 'ns', 'q').catch((e: unknown) => e))).toBe(true);
  });

  it('makes a merge patch carrying a resourceVersion conditional, and keeps status to the status subresource', async () => {
    const fake = new FakeKubeClient();
    const p = fake.seed(PODS, pod('p'));
    const stale = p.metadata!.resourceVersion;
    await fake.mergePatch(PODS, 'ns', 'p', { spec: { b: 2 }, status: { ignored: true } });
    expect(fake.peek<Pod>(PODS, 'ns', 'p')).toMatchObject({ spec: { a: 1, b: 2 } });
    expect(fake.peek<Pod>(PODS, 'ns', 'p')!.status).toBeUndefined();
    expect(
      isConflict(
        await fake
          .mergePatch(PODS, 'ns', 'p', { metadata: { resourceVersion: stale }, status: { x: 1 } }, 'status')
          .catch((e: unknown) => e),
      ),
    ).toBe(true);
    await fake.mergePatch(PODS, 'ns', 'p', { status: { x: 1 }, spec: { ignored: true } }, 'status');
    expect(fake.peek<Pod>(PODS, 'ns', 'p')).toMatchObject({ spec: { a: 1, b: 2 }, status: { x: 1 } });
    expect(fake.peek<Pod>(PODS, 'ns', 'p')!.spec).not.toHaveProperty('ignored');
  });

  it('honours a uid precondition on delete with a 409 Conflict, and replace needs the current resourceVersion', async () => {
    const fake = new FakeKubeClient();
    const p = fake.seed(PODS, pod('p'));
    const refused = await fake.delete(PODS, 'ns', 'p', { uid: 'someone-else' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe(409);
    expect(
      isConflict(await fake.replace(PODS, 'ns', 'p', { ...p, metadata: { ...p.metadata, resourceVersion: '1' } }).catch((e: unknown) => e)),
    ).toBe(true);
    await fake.delete(PODS, 'ns', 'p', { uid: p.metadata!.uid });
    expect(fake.peek(PODS, 'ns', 'p')).toBeUndefined();
  });

  it('lists with selectors and pages, and fails the next calls on request', async () => {
    const fake = new FakeKubeClient();
    for (const n of ['a', 'b', 'c']) fake.seed(PODS, pod(n, { app: n === 'c' ? 'y' : 'x' }));
    fake.seed(NAMESPACES, { metadata: { name: 'ns' } });
    const first = await fake.list<Pod>(PODS, { namespace: 'ns', labelSelector: 'app=x', limit: 1 });
    const second = await fake.list<Pod>(PODS, { namespace: 'ns', labelSelector: 'app=x', limit: 1, continue: first.metadata.continue });
    expect([...first.items, ...second.items].map((p) => p.metadata?.name)).toEqual(['a', 'b']);
    expect(second.metadata.continue).toBeUndefined();
    expect((await fake.list(NAMESPACES, { fieldSelector: 'metadata.name=ns' })).items).toHaveLength(1);
    fake.failNext(2, 503, { verb: 'list' });
    await expect(fake.list(PODS)).rejects.toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    await expect(fake.list(PODS)).rejects.toMatchObject({ code: 503 });
    expect((await fake.list(PODS)).items).toHaveLength(3);
  });

  it('replays the events after a watch resourceVersion, then streams; 410 Expired after compaction', async () => {
    const fake = new FakeKubeClient();
    const from = fake.resourceVersion;
    fake.seed(PODS, pod('a'));
    const seen: WatchEvent[] = [];
    const stop = new AbortController();
    const done = fake.watch(PODS, { namespace: 'ns', resourceVersion: from }, (e) => seen.push(e), stop.signal);
    fake.seed(PODS, pod('b'));
    await fake.delete(PODS, 'ns', 'a');
    expect(seen.map((e) => `${e.type} ${(e.object as Pod).metadata?.name}`)).toEqual(['ADDED a', 'ADDED b', 'DELETED a']);
    stop.abort();
    await done;
    fake.compact();
    const errors: WatchEvent[] = [];
    await fake.watch(PODS, { resourceVersion: from }, (e) => errors.push(e), new AbortController().signal);
    expect(errors).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) }]);
  });

  it('matches equality and set label selectors', () => {
    const labels = { a: '1', b: '2' };
    expect(matchesLabels(labels, 'a')).toBe(true);
    expect(matchesLabels(labels, '!a')).toBe(false);
    expect(matchesLabels(labels, 'a=1,b==2')).toBe(true);
    expect(matchesLabels(labels, 'a!=1')).toBe(false);
    expect(matchesLabels(labels, 'c')).toBe(false);
    expect(matchesLabels(labels, 'a in (0,1),b')).toBe(true);
    expect(matchesLabels(labels, 'a in (0, 3),b')).toBe(false);
    expect(matchesLabels(labels, 'a notin (0,1)')).toBe(false);
    expect(matchesLabels(labels, 'c notin (1)')).toBe(true);
    expect(matchesLabels(labels, 'c in (1)')).toBe(false);
  });
});
