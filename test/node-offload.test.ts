/**
 * Workflows with more nodes than their object should hold (issue 34), against the real API
 * server, the local pod runner and a real PostgreSQL: over `offloadNodesAbove` the controller
 * keeps the nodes in the database by version and the object only a summary; a controller
 * restarted mid-run reads them back and finishes without running anything twice; the server (with
 * the caller's rights) and the archive give every node; retry refuses, naming why; the nodes of a
 * deleted workflow are swept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLOAD_SUMMARY_NODES, readableWorkflow, type Workflow } from '../src/api/index.js';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { startPostgres, type Postgres } from '../src/devenv/postgres.js';
import { PODS, WORKFLOWS } from '../src/kube/resource.js';
import { adminKubeConfig, cluster } from './support/cluster.js';
import { call, grantRole, rule, startTestServer, type TestServer } from './support/server.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';

const ITEMS = 24;

function loop(name: string): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        parallelism: 4,
        steps: [
          [
            {
              name: 'each',
              template: 'work',
              withSequence: { count: String(ITEMS) },
              arguments: { parameters: [{ name: 'i', value: '{{item}}' }] },
            },
          ],
        ],
      },
      {
        name: 'work',
        inputs: { parameters: [{ name: 'i' }] },
        container: { image: 'alpine:3', command: ['sh', '-c', 'echo item {{inputs.parameters.i}}'] },
      },
    ],
  });
}

describe('node status offloaded to the archive database', () => {
  let db: Postgres;
  let store: ArchiveStore;
  let bed: RunnerBed;
  let controller: RunningController | undefined;
  let srv: TestServer;
  const { log } = captureLogger();

  const start = () =>
    startController({
      kubeConfig: adminKubeConfig(),
      namespace: bed.ns,
      metricsPort: 0,
      workers: 2,
      archiveUrl: db.url,
      offloadNodesAbove: 10,
      log,
    });
  const get = (name: string) => bed.client.get<Workflow>(WORKFLOWS, bed.ns, name);

  beforeAll(async () => {
    db = await startPostgres({ log: (l) => console.log(l) });
    store = ArchiveStore.open(db.url);
    bed = await startRunnerBed('offload');
    await grantRole(bed.ns, 'alice', 'offload-reader', [rule('workflows', 'list', 'get', 'update', 'patch')]);
    srv = await startTestServer({ secure: false, archiveUrl: db.url });
    controller = await start();
  }, 300_000);

  afterAll(async () => {
    await controller?.stop();
    await srv?.close();
    await bed?.stop();
    await store?.close();
    await db?.stop();
  });

  it('keeps a summary in the object and every node, by version, in the database; a restarted controller finishes it once', async () => {
    await bed.client.create(WORKFLOWS, bed.ns, loop('big'));
    // Offloaded while it runs: the object names a version and holds at most the summary.
    const running = await eventually(async () => {
      const wf = await get('big');
      return wf.status?.offloadNodeStatusVersion && wf.status.phase === 'Running' ? wf : undefined;
    }, 'the nodes offloaded while the loop runs');
    expect(running.status?.compressedNodes).toBeUndefined();
    expect(Object.keys(running.status?.nodes ?? {}).length).toBeLessThan(ITEMS);
    expect(running.status?.nodes?.big?.phase).toBe('Running');

    // A controller stopped mid-run; the next one reads the nodes back from the database.
    await controller!.stop();
    controller = undefined;
    controller = await start();
    const done = await waitForCompletion(bed.client, bed.ns, 'big', 180_000);
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.progress).toBe(`${ITEMS}/${ITEMS}`);
    expect(Object.keys(done.status?.nodes ?? {}).length).toBeLessThanOrEqual(OFFLOAD_SUMMARY_NODES);

    // Read through the one interface: every node, each item once, all Succeeded.
    const full = await readableWorkflow(done, store.nodeStatus());
    const items = Object.values(full.status?.nodes ?? {}).filter((n) => n.type === 'Pod');
    expect(items).toHaveLength(ITEMS);
    expect(items.every((n) => n.phase === 'Succeeded')).toBe(true);
    expect(full.status?.nodes?.big?.children?.length).toBe(1);
    // Nothing ran twice: one pod per item.
    const pods = await bed.client.list<{ metadata: { name: string; ownerReferences?: { uid: string }[] } }>(PODS, { namespace: bed.ns });
    expect(pods.items.filter((p) => p.metadata.ownerReferences?.some((o) => o.uid === done.metadata?.uid))).toHaveLength(ITEMS);
  });

  it('the server gives every node to a caller who may read the workflow, and the archive holds them all', async () => {
    const { alice, bob } = cluster().userTokens;
    const r = await call('GET', `${srv.url}/api/v1/workflows/${bed.ns}/big`, { token: alice });
    expect(r.status).toBe(200);
    expect(Object.values(r.body.status.nodes as Record<string, { type: string }>).filter((n) => n.type === 'Pod')).toHaveLength(ITEMS);
    expect((await call('GET', `${srv.url}/api/v1/workflows/${bed.ns}/big`, { token: bob })).status).toBe(403);
    const uid = (await get('big')).metadata!.uid!;
    const archived = await eventually(() => store.get(uid), 'the workflow archived');
    expect(Object.values(archived.status?.nodes ?? {}).filter((n) => n.type === 'Pod')).toHaveLength(ITEMS);
    expect(archived.status?.offloadNodeStatusVersion).toBeUndefined();
  });

  it('retry refuses an offloaded workflow, naming why; the nodes of a deleted workflow are swept', async () => {
    const { alice } = cluster().userTokens;
    const r = await call('PUT', `${srv.url}/api/v1/workflows/${bed.ns}/big/retry`, { token: alice, body: {} });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(
      /keeps its nodes in the archive database .*retry of such a workflow is not supported; resubmit it instead/,
    );
    const uid = (await get('big')).metadata!.uid!;
    const nodes = store.nodeStatus();
    expect(await nodes.rowCount(uid)).toBeGreaterThan(ITEMS);
    await bed.client.delete(WORKFLOWS, bed.ns, 'big');
    await eventually(async () => {
      try {
        await get('big');
        return false;
      } catch {
        return true;
      }
    }, 'the workflow gone');
    expect(await nodes.sweep(new Set(), [bed.ns], 0)).toEqual([uid]);
    expect(await nodes.rowCount(uid)).toBe(0);
  });
});
