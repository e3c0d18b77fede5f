/**
 * The workflow archive against a real PostgreSQL (Debian's server, started on loopback by
 * src/devenv/postgres.ts): written once however often it is asked, read back whole, listed by
 * page with filters and an exact count, pruned by age and count, and a database outage fails the
 * write with an error (nothing half-written) that a retry after it recovers from.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeStatus, Workflow } from '../src/api/index.js';
import type pg from 'pg';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { startPostgres, type Postgres } from '../src/devenv/postgres.js';

function finished(ns: string, name: string, phase: string, finishedAt: string, labels: Record<string, string> = {}, nodes = 3): Workflow {
  const uid = randomUUID();
  const nodeMap = Object.fromEntries(
    Array.from({ length: nodes }, (_, i) => [`${name}-${i}`, { id: `${name}-${i}`, name: `${name}[${i}]`, type: 'Pod', phase }]),
  );
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: ns, uid, labels, creationTimestamp: '2026-11-28T09:00:00Z' },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox' } }] },
    status: { phase, startedAt: '2026-11-28T09:00:01Z', finishedAt, progress: `${nodes}/${nodes}`, nodes: nodeMap },
  } as unknown as Workflow;
}

describe('workflow archive on PostgreSQL', () => {
  let db: Postgres;
  let store: ArchiveStore;

  beforeAll(async () => {
    db = await startPostgres({ log: (l) => console.log(l) });
    store = ArchiveStore.open(db.url);
  });

  afterAll(async () => {
    await store?.close();
    await db?.stop();
  });

  it('writes a finished workflow once, however often and by however many writers it is asked', async () => {
    const wf = finished('team-a', 'once', 'Succeeded', '2026-11-28T10:00:00Z', { app: 'web' });
    const second = ArchiveStore.open(db.url); // a second controller; migrations run once
    try {
      const results = await Promise.all([store.archive(wf), second.archive(wf), store.archive(wf)]);
      expect(results.sort()).toEqual(['already', 'already', 'archived']);
    } finally {
      await second.close();
    }
    expect(await store.count({ namespaces: ['team-a'], name: 'once' })).toBe(1);
  });

  it('writes a batch in one transaction, each workflow once, even when the batch repeats one', async () => {
    const a = finished('team-batch', 'a', 'Succeeded', '2026-11-28T10:00:00Z', { app: 'x' });
    const b = finished('team-batch', 'b', 'Failed', '2026-11-28T10:00:01Z');
    expect(await store.archiveMany([a, b, a])).toEqual(['archived', 'archived', 'already']);
    expect(await store.archiveMany([b])).toEqual(['already']);
    expect(await store.count({ namespaces: ['team-batch'], labelSelector: 'app=x' })).toBe(1);
    expect(Object.keys((await store.get(a.metadata!.uid!))!.status!.nodes!)).toHaveLength(3);
  });

  it('reads an archived workflow back whole: metadata, spec, status and every node (also from compressedNodes)', async () => {
    const wf = finished('team-a', 'whole', 'Failed', '2026-11-28T10:01:00Z', {}, 2500);
    const { nodes, ...rest } = wf.status!;
    const compressed = { ...wf, status: { ...rest, compressedNodes: gzipSync(JSON.stringify(nodes)).toString('base64') } } as Workflow;
    expect(await store.archive(compressed)).toBe('archived');
    const back = await store.get(wf.metadata!.uid!);
    expect(back?.metadata).toMatchObject({ name: 'whole', namespace: 'team-a', uid: wf.metadata!.uid });
    expect(back?.spec).toEqual(wf.spec);
    expect(back?.status).toMatchObject({ phase: 'Failed', finishedAt: '2026-11-28T10:01:00Z', progress: '2500/2500' });
    expect(back?.status?.nodes).toEqual(nodes);
    expect(await store.get(randomUUID())).toBeUndefined();
    expect(await store.get("'; drop table archived_workflows; --")).toBeUndefined();
  });

  it('lists newest first by pages with a cursor, filters by phase and labels, and counts exactly', async () => {
    const ns = 'team-list';
    for (let i = 0; i < 25; i++)
      await store.archive(
        finished(
          ns,
          `wf-${String(i).padStart(2, '0')}`,
          i % 5 === 0 ? 'Failed' : 'Succeeded',
          new Date(Date.UTC(2026, 10, 28, 11, i)).toISOString(),
          {
            team: i % 2 ? 'odd' : 'even',
            ...(i % 3 === 0 ? { flaky: 'yes' } : {}),
          },
        ),
      );
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ namespaces: [ns] }, { limit: 10, ...(cursor ? { cursor } : {}) });
      names.push(...page.items.map((w) => w.name));
      cursor = page.continue;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(names).toEqual(Array.from({ length: 25 }, (_, i) => `wf-${String(24 - i).padStart(2, '0')}`));
    expect(await store.count({ namespaces: [ns] })).toBe(25);
    expect(await store.count({ namespaces: [ns], phases: ['Failed'] })).toBe(5);
    expect(await store.count({ namespaces: [ns], labelSelector: 'team=odd' })).toBe(12);
    expect(await store.count({ namespaces: [ns], labelSelector: 'team=even,flaky' })).toBe(5); // 0, 6, 12, 18, 24
    expect(await store.count({ namespaces: [ns], labelSelector: '!flaky' })).toBe(16);
    expect(await store.count({ namespaces: [ns], labelSelector: 'team notin (odd)', phases: ['Failed'] })).toBe(3); // 0, 10, 20
    const first = (await store.list({ namespaces: [ns], phases: ['Failed'] }, { limit: 2 })).items;
    expect(first.map((w) => [w.name, w.phase, w.labels.team, w.nodeCount])).toEqual([
      ['wf-20', 'Failed', 'even', 3],
      ['wf-15', 'Failed', 'odd', 3],
    ]);
    // Another namespace's workflows are not in this one's list.
    expect(await store.count({ namespaces: ['team-a', ns] })).toBe(27);
  });

  it('retention: by age, then all but the newest N of each namespace', async () => {
    const ns = 'team-prune';
    for (let d = 1; d <= 6; d++) await store.archive(finished(ns, `day-${d}`, 'Succeeded', `2026-11-0${d}T00:00:00Z`));
    expect(await store.prune({ olderThan: new Date('2026-11-03T00:00:00Z') })).toBe(2);
    const removed = await store.prune({ keepPerNamespace: 3 });
    expect(removed).toBeGreaterThanOrEqual(1);
    expect((await store.list({ namespaces: [ns] }, { limit: 10 })).items.map((w) => w.name)).toEqual(['day-6', 'day-5', 'day-4']);
  });

  it('a connection the database drops while a writer holds it fails that write and does not crash the process', async () => {
    // A checked-out client has no pool listener: without its own, the reset would be an uncaught
    // exception that takes the controller down (vitest fails the run on one).
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const held = await pool.connect();
    await db.kill();
    await new Promise((r) => setTimeout(r, 500));
    await expect(held.query('select 1')).rejects.toThrow();
    held.release(true);
    await db.restart();
  });

  it('a database outage fails the write whole; the same write succeeds once it is back, exactly once', async () => {
    const wf = finished('team-a', 'outage', 'Succeeded', '2026-11-28T12:00:00Z', {}, 5000);
    await db.kill();
    await expect(store.archive(wf)).rejects.toThrow();
    await db.restart();
    let result: string | undefined;
    for (let i = 0; i < 50 && !result; i++)
      result = await store.archive(wf).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)));
    expect(result).toBe('archived');
    expect(
      (await store.get(wf.metadata!.uid!))?.status?.nodes && Object.keys((await store.get(wf.metadata!.uid!))!.status!.nodes!).length,
    ).toBe(5000);
    expect(await store.archive(wf)).toBe('already');
  });

  it('cancels a list that runs past the statement timeout, and answers again once the table is free', async () => {
    const quick = ArchiveStore.open(db.url, { statementTimeoutMs: 300 });
    await quick.ready();
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const locker = await pool.connect();
    try {
      // Another session holds the table: without a timeout the list would wait as long as it does.
      await locker.query('begin');
      await locker.query('lock table archived_workflows in access exclusive mode');
      const started = Date.now();
      await expect(quick.list({ namespaces: ['team-a'] }, { limit: 5 })).rejects.toThrow(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await locker.query('rollback');
      locker.release();
    }
    expect((await quick.list({ namespaces: ['team-a'] }, { limit: 5 })).items.length).toBeGreaterThan(0);
    await quick.close();
  });

  it("never hands a deleted namespace's archive to a later namespace of the same name", async () => {
    const [oldUid, newUid, otherUid] = [randomUUID(), randomUUID(), randomUUID()];
    await store.archive(finished('reused', 'old-team', 'Succeeded', '2026-11-28T10:00:00Z'), oldUid);
    await store.archive(finished('reused-2', 'kept', 'Succeeded', '2026-11-28T10:00:00Z'), otherUid);
    await store.archive(finished('reused-3', 'gone', 'Succeeded', '2026-11-28T10:00:00Z'), randomUUID());
    // The deletion was seen: the namespace's rows go at once, no other namespace's.
    expect(await store.purgeNamespace('reused', oldUid)).toBe(1);
    expect(await store.count({ namespaces: ['reused'] })).toBe(0);
    // Deleted and made again while no controller watched: the sweep tells the old rows by their uid.
    await store.archive(finished('reused', 'old-again', 'Succeeded', '2026-11-28T10:00:00Z'), oldUid);
    await store.archive(finished('reused', 'new-team', 'Succeeded', '2026-11-28T10:00:00Z'), newUid);
    const live = new Map([
      ['reused', newUid],
      ['reused-2', otherUid],
    ]);
    expect(await store.purgeGoneNamespaces(live, ['reused', 'reused-2', 'reused-3'])).toBe(2); // old-again, and reused-3 (gone)
    expect((await store.list({ namespaces: ['reused'] }, { limit: 10 })).items.map((w) => w.name)).toEqual(['new-team']);
    expect(await store.count({ namespaces: ['reused-2'] })).toBe(1);
    // A sweep scoped to some namespaces leaves the others alone.
    expect(await store.count({ namespaces: ['team-a'] })).toBeGreaterThan(0);
  });

  it('reads a large workflow back by pages of nodes, never needing all of them at once', async () => {
    const wf = finished('team-pages', 'paged', 'Succeeded', '2026-11-28T10:00:00Z', {}, 4500);
    await store.archive(wf);
    const sizes: number[] = [];
    const ids: string[] = [];
    for await (const page of store.nodePages(wf.metadata!.uid!, 1000)) {
      sizes.push(page.length);
      for (const [id, json] of page) {
        ids.push(id);
        expect(JSON.parse(json)).toEqual(wf.status!.nodes![id]);
      }
    }
    expect(sizes).toEqual([1000, 1000, 1000, 1000, 500]);
    expect(new Set(ids).size).toBe(4500);
    expect(await store.locate(wf.metadata!.uid!)).toEqual({ namespace: 'team-pages', nodeCount: 4500 });
  });

  it('refuses a workflow that has not finished, naming it', async () => {
    const wf = finished('team-a', 'running', 'Running', '');
    delete (wf.status as { finishedAt?: string }).finishedAt;
    await expect(store.archive(wf)).rejects.toThrow('workflow team-a/running has not finished: only finished workflows are archived');
  });
  it('keeps offloaded nodes by version: a reader at a version sees exactly its nodes, however far the writer went on', async () => {
    const nodes = store.nodeStatus(0);
    const uid = randomUUID();
    const where = { uid, namespace: 'offload' };
    const n = (id: string, phase: NodeStatus['phase']): NodeStatus => ({ id, name: id, displayName: id, type: 'Pod', phase });
    await nodes.save(where, 1, { root: n('root', 'Running'), a: n('a', 'Running') });
    await nodes.save(where, 2, { a: n('a', 'Succeeded'), b: n('b', 'Running') });
    await nodes.save(where, 3, { b: n('b', 'Failed') }, ['a']);
    expect(await nodes.load(uid, 1)).toEqual({ root: n('root', 'Running'), a: n('a', 'Running') });
    expect(await nodes.load(uid, 2)).toEqual({ root: n('root', 'Running'), a: n('a', 'Succeeded'), b: n('b', 'Running') });
    expect(await nodes.load(uid, 3)).toEqual({ root: n('root', 'Running'), b: n('b', 'Failed') });
    // Version 3 never reached the object (its status write conflicted): the next write replaces it.
    await nodes.save(where, 3, { b: n('b', 'Succeeded') });
    expect(await nodes.load(uid, 3)).toEqual({ root: n('root', 'Running'), a: n('a', 'Succeeded'), b: n('b', 'Succeeded') });
    // A node id that is no plain key stays data.
    await nodes.save(where, 4, Object.fromEntries([['__proto__', n('__proto__', 'Running')]]));
    // Compaction (nothing kept superseded here) leaves version 4 whole and drops what it superseded.
    const before = await nodes.rowCount(uid);
    expect(await nodes.compact(uid, 4)).toBeGreaterThan(0);
    expect(await nodes.rowCount(uid)).toBeLessThan(before);
    expect(Object.keys(await nodes.load(uid, 4)).sort()).toEqual(['__proto__', 'a', 'b', 'root']);
    await expect(nodes.load(randomUUID(), 1)).rejects.toThrow(/are not in the database/);
    // The nodes of a workflow that is gone are swept; a live one's stay.
    expect(await nodes.sweep(new Set([uid]), ['offload'], 0)).toEqual([]);
    expect(await nodes.sweep(new Set(), ['offload'], 0)).toEqual([uid]);
    expect(await nodes.rowCount(uid)).toBe(0);
  });
});
