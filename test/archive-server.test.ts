/**
 * /api/v1/archived-workflows against a real PostgreSQL and the real API server with RBAC on: the
 * archive is read with the caller's rights (list, get and delete workflows in the namespace, as
 * for live ones), pages with a cursor, filters by phase and labels, counts, resubmits with the
 * caller's own token, and says so when the database does not answer.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { runArchiveGet, runArchiveList, runArchiveResubmit } from '../src/cli/archive.js';
import { startPostgres, type Postgres } from '../src/devenv/postgres.js';
import { cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import { call, grantRole, listWorkflows, rule, startTestServer, type TestServer } from './support/server.js';

function finished(ns: string, name: string, phase: string, minute: number, labels: Record<string, string> = {}): Workflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: ns, uid: randomUUID(), labels },
    spec: {
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'who', value: 'ada' }] },
      templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', '{{workflow.parameters.who}}'] } }],
    },
    status: {
      phase,
      startedAt: '2026-11-28T08:00:00Z',
      finishedAt: new Date(Date.UTC(2026, 10, 28, 9, minute)).toISOString(),
      nodes: { [name]: { id: name, name, type: 'Pod', phase } },
    },
  } as unknown as Workflow;
}

describe('archived workflows over REST', () => {
  let db: Postgres;
  let store: ArchiveStore;
  let srv: TestServer;
  let mine: string;
  let theirs: string;
  let alice: string; // lists, gets, creates workflows in `mine`; may not delete
  let carol: string; // lists, gets and deletes in `mine`
  const uids: Record<string, string> = {};

  beforeAll(async () => {
    db = await startPostgres({ log: (l) => console.log(l) });
    store = ArchiveStore.open(db.url);
    mine = await createTestNamespace('archive-mine');
    theirs = await createTestNamespace('archive-theirs');
    ({ alice, carol } = cluster().userTokens);
    await grantRole(mine, 'alice', 'archive-reader', [rule('workflows', 'list', 'get', 'create')]);
    await grantRole(mine, 'carol', 'archive-cleaner', [rule('workflows', 'list', 'get', 'delete')]);
    for (let i = 0; i < 7; i++) {
      const wf = finished(mine, `run-${i}`, i === 3 ? 'Failed' : 'Succeeded', i, { app: i % 2 ? 'web' : 'db' });
      uids[`run-${i}`] = wf.metadata!.uid!;
      await store.archive(wf);
    }
    const other = finished(theirs, 'secret-run', 'Succeeded', 30);
    uids['secret-run'] = other.metadata!.uid!;
    await store.archive(other);
    srv = await startTestServer({ secure: false, archiveUrl: db.url });
  });

  afterAll(async () => {
    await srv?.close();
    await store?.close();
    await db?.stop();
    await deleteTestNamespace(mine);
    await deleteTestNamespace(theirs);
  });

  const get = (path: string, token = alice) => call('GET', `${srv.url}/api/v1/archived-workflows${path}`, { token });

  it("lists a namespace's archived workflows newest first, by page, with filters and an exact count", async () => {
    const first = await get(`?namespace=${mine}&listOptions.limit=3&count=true`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((w: { name: string }) => w.name)).toEqual(['run-6', 'run-5', 'run-4']);
    expect(first.body.metadata.count).toBe(7);
    const second = await get(`?namespace=${mine}&listOptions.limit=3&listOptions.continue=${first.body.metadata.continue}`);
    expect(second.body.items.map((w: { name: string }) => w.name)).toEqual(['run-3', 'run-2', 'run-1']);
    const failed = await get(`?namespace=${mine}&phase=Failed`);
    expect(failed.body.items.map((w: { name: string; phase: string }) => [w.name, w.phase])).toEqual([['run-3', 'Failed']]);
    const web = await get(`?namespace=${mine}&listOptions.labelSelector=app%3Dweb&count=true`);
    expect(web.body.metadata.count).toBe(3);
  });

  it('refuses what the caller may not read, and a bad query naming what is wrong', async () => {
    expect((await get(`?namespace=${theirs}`)).status).toBe(403);
    expect((await get('')).status).toBe(403); // every namespace: needs the right cluster-wide
    expect((await get(`?namespace=${mine}`, cluster().userTokens.bob)).status).toBe(403);
    const bad = await get(`?namespace=${mine}&listOptions.labelSelector=a%3Db%20c`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/"a=b c" is not a requirement/);
    expect((await get(`?namespace=${mine}&phase=Running`)).body.message).toMatch(/not a phase of a finished workflow/);
    expect((await get(`?namespace=${mine}&listOptions.continue=nope`)).status).toBe(400);
  });

  it('opens one archived workflow whole; one in a namespace the caller may not read is not found', async () => {
    const one = await get(`/${uids['run-2']}`);
    expect(one.status).toBe(200);
    expect(one.body.metadata.name).toBe('run-2');
    expect(Object.keys(one.body.status.nodes)).toEqual(['run-2']);
    expect((await get(`/${uids['secret-run']}`)).status).toBe(404);
    expect((await get(`/${randomUUID()}`)).status).toBe(404);
  });

  it('streams a huge archived workflow, holding two reads and queueing eight: the next caller gets a 503 saying why, and every held read completes whole', async () => {
    // 12,000 nodes of about 2 KB: 24 MB of JSON, more than loopback's socket buffers hold, so a
    // caller that does not read keeps its read (and its slot) open.
    const wf = finished(mine, 'huge', 'Succeeded', -30); // the oldest: later lists of the newest do not see it
    const nodes: Record<string, unknown> = {};
    for (let i = 0; i < 12_000; i++)
      nodes[`huge-${i}`] = { id: `huge-${i}`, name: `huge[${i}]`, type: 'Pod', phase: 'Succeeded', message: 'x'.repeat(2000) };
    wf.status!.nodes = nodes as never;
    await store.archive(wf);
    const url = `${srv.url}/api/v1/archived-workflows/${wf.metadata!.uid}`;
    const agents = Array.from({ length: 10 }, () => new Agent());
    const held = agents.map((dispatcher) => request(url, { headers: { authorization: `Bearer ${alice}` }, dispatcher }));
    // Two are streaming (their status came), eight wait for a slot (no status yet).
    let started = 0;
    for (const r of held) void r.then(() => started++);
    const until = Date.now() + 30_000;
    while (started < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1000));
    expect(started).toBe(2);
    const refused = await call('GET', url, { token: alice });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      code: 14,
      message: `archived workflow ${wf.metadata!.uid} is a large read and 2 are running with 8 waiting (the server's bound); try again shortly`,
    });
    const bodies = await Promise.all(
      held.map(async (pending) => {
        const r = await pending;
        return { status: r.statusCode, body: (await r.body.json()) as Workflow };
      }),
    );
    await Promise.all(agents.map((a) => a.close()));
    for (const { status, body } of bodies) {
      expect(status).toBe(200);
      expect(Object.keys(body.status!.nodes!)).toHaveLength(12_000);
      expect(body.status!.nodes!['huge-11999']).toEqual(nodes['huge-11999']);
    }
    expect((await call('GET', url, { token: alice })).status).toBe(200);
  });

  it("resubmits an archived workflow as a new live one, with the caller's rights", async () => {
    const r = await call('PUT', `${srv.url}/api/v1/archived-workflows/${uids['run-1']}/resubmit`, {
      token: alice,
      body: { parameters: ['who=grace'] },
    });
    expect(r.status).toBe(200);
    const live = (await listWorkflows(mine)).find((w) => w.metadata.name === r.body.metadata.name);
    expect(live?.spec.arguments.parameters).toEqual([{ name: 'who', value: 'grace' }]);
  });

  it('retries an archived failed workflow: created again under its name with the retry status, refused without the rights or while it exists', async () => {
    const path = `${srv.url}/api/v1/archived-workflows/${uids['run-3']}/retry`;
    // alice may create workflows but not write their status: refused before anything is created.
    const refused = await call('PUT', path, { token: alice, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/so it may not retry its archived workflows/);
    expect((await listWorkflows(mine)).map((w) => w.metadata?.name)).not.toContain('run-3');
    const { dave } = cluster().userTokens;
    await grantRole(mine, 'dave', 'archive-retrier', [
      rule('workflows', 'list', 'get', 'create', 'patch'),
      rule('workflows/status', 'update'),
    ]);
    const r = await call('PUT', path, { token: dave, body: {} });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.metadata.name).toBe('run-3');
    expect(r.body.metadata.labels['workflows.plugflow.io/retried-from-archive']).toBe(uids['run-3']);
    expect(r.body.metadata.labels['workflows.plugflow.io/phase']).toBeUndefined();
    expect(r.body.spec.suspend).toBeUndefined();
    // The failed step is gone from the status, to run again; the workflow runs again.
    expect(r.body.status.phase).toBe('Running');
    expect(r.body.status.nodes?.['run-3']).toBeUndefined();
    const again = await call('PUT', path, { token: dave, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/exists again: retry it with `plugflow retry run-3`/);
  });

  it('deletes with the right to delete workflows there', async () => {
    const path = `${srv.url}/api/v1/archived-workflows/${uids['run-0']}`;
    expect((await call('DELETE', path, { token: alice })).status).toBe(403);
    expect((await call('DELETE', path, { token: carol })).status).toBe(200);
    expect((await get(`/${uids['run-0']}`)).status).toBe(404);
  });

  it('plugflow archive list | get | resubmit print what the REST API answers', async () => {
    const out: string[] = [];
    const p = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
    const flags = { server: srv.url, token: alice, namespace: mine };
    expect(await runArchiveList({ ...flags, phase: 'Failed', count: true }, p)).toBe(0);
    expect(out[0]).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+FINISHED\s+DURATION\s+UID$/);
    expect(out[1]).toContain(`${mine}  run-3  Failed`);
    expect(out[1]).toContain(uids['run-3']);
    expect(out.at(-1)).toBe('(1 archived workflows match)');
    out.length = 0;
    expect(await runArchiveList({ ...flags, limit: 2, output: 'name' }, p)).toBe(0);
    expect(out).toEqual([uids['run-6'], uids['run-5']]);
    out.length = 0;
    expect(await runArchiveGet(uids['run-3'], flags, p)).toBe(0);
    expect(out.join('\n')).toContain('run-3');
    out.length = 0;
    expect(await runArchiveResubmit(uids['run-3'], { ...flags, parameter: ['who=ann'] }, p)).toBe(0);
    expect(out[0]).toMatch(new RegExp(`^Workflow ${mine}/run-3-\\w+ submitted \\(resubmitted from archived workflow ${uids['run-3']}\\)$`));
    await expect(runArchiveList({ namespace: mine }, p)).rejects.toThrow(/give --server/);
  });

  it('a database that does not answer is a 503 naming the archive', async () => {
    await db.kill();
    try {
      const r = await get(`?namespace=${mine}`);
      expect(r.status).toBe(503);
      expect(r.body.message).toMatch(/the workflow archive cannot be read/);
    } finally {
      await db.restart();
    }
  });
});
