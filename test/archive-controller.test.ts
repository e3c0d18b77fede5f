/**
 * The controller writing finished workflows to the archive, against the real API server, the
 * local pod runner and a real PostgreSQL: a workflow that ends is archived once, labelled and let
 * go; a controller that died between the write and the label (its label gone) writes nothing
 * twice; while the database is down a finished workflow waits — held by its finalizer even when
 * deleted — /readyz and the metric say so, and it is archived and deleted once the database is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { ARCHIVE_FINALIZER, LABEL_ARCHIVING_STATUS } from '../src/controller/archiver.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { startPostgres, type Postgres } from '../src/devenv/postgres.js';
import { isNotFound } from '../src/kube/errors.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { CoreV1Api } from '@kubernetes/client-node';
import { adminKubeConfig } from './support/cluster.js';
import { captureLogger, eventually, oneStep, startRunnerBed, waitForCompletion, type RunnerBed } from './controller-harness.js';

describe('the controller archives finished workflows', () => {
  let db: Postgres;
  let store: ArchiveStore;
  let bed: RunnerBed;
  let controller: RunningController;
  const { log, lines } = captureLogger();

  const get = (name: string) => bed.client.get<Workflow>(WORKFLOWS, bed.ns, name);
  const archivedNamed = (name: string) => store.count({ namespaces: [bed.ns], name });
  const writes = async (result: string) =>
    (await controller.metrics.archiveWrites.get()).values.find((v) => v.labels.result === result)?.value ?? 0;

  beforeAll(async () => {
    db = await startPostgres({ log: (l) => console.log(l) });
    store = ArchiveStore.open(db.url);
    bed = await startRunnerBed('archive');
    controller = await startController({
      kubeConfig: adminKubeConfig(),
      namespace: bed.ns,
      metricsPort: 0,
      workers: 2,
      archiveUrl: db.url,
      log,
    });
  }, 300_000);

  afterAll(async () => {
    await controller?.stop();
    await bed?.stop();
    await store?.close();
    await db?.stop();
  });

  it('archives a workflow that ends, once, with its nodes, then labels it and drops its finalizer', async () => {
    await bed.client.create(WORKFLOWS, bed.ns, oneStep('archived-one'));
    await eventually(async () => (await get('archived-one')).metadata?.finalizers?.includes(ARCHIVE_FINALIZER), 'the archive finalizer');
    const done = await waitForCompletion(bed.client, bed.ns, 'archived-one');
    const labelled = await eventually(async () => {
      const wf = await get('archived-one');
      return wf.metadata?.labels?.[LABEL_ARCHIVING_STATUS] === 'Archived' ? wf : undefined;
    }, 'the Archived label');
    expect(labelled.metadata?.finalizers ?? []).not.toContain(ARCHIVE_FINALIZER);
    expect(await archivedNamed('archived-one')).toBe(1);
    const back = await store.get(done.metadata!.uid!);
    expect(back?.status?.phase).toBe(done.status?.phase);
    expect(Object.keys(back?.status?.nodes ?? {}).sort()).toEqual(Object.keys(done.status?.nodes ?? {}).sort());
  });

  it('a controller that died between the write and the label writes nothing twice', async () => {
    const before = await writes('already');
    await bed.client.mergePatch(WORKFLOWS, bed.ns, 'archived-one', {
      metadata: { labels: { [LABEL_ARCHIVING_STATUS]: null }, finalizers: [ARCHIVE_FINALIZER] },
    });
    await eventually(async () => (await get('archived-one')).metadata?.labels?.[LABEL_ARCHIVING_STATUS] === 'Archived', 'labelled again');
    expect(await writes('already')).toBeGreaterThan(before);
    expect(await archivedNamed('archived-one')).toBe(1);
  });

  it('while the database is down a finished workflow waits, even deleted; /readyz says so; it is archived once the database is back', async () => {
    await db.kill();
    await bed.client.create(WORKFLOWS, bed.ns, oneStep('during-outage'));
    await waitForCompletion(bed.client, bed.ns, 'during-outage');
    const problem = await eventually(
      async () => controller.readinessProblems().find((p) => p.startsWith('the workflow archive cannot be written since')),
      '/readyz to report the archive',
    );
    expect(problem).toBeTruthy();
    expect(await writes('failed')).toBeGreaterThan(0);
    expect(
      lines.some((l) => l.message === 'the workflow archive cannot be written; finished workflows wait (held by their finalizer)'),
    ).toBe(true);
    await bed.client.delete(WORKFLOWS, bed.ns, 'during-outage');
    await new Promise((r) => setTimeout(r, 1500));
    const held = await get('during-outage');
    expect(held.metadata?.deletionTimestamp).toBeTruthy();
    expect(held.metadata?.finalizers).toContain(ARCHIVE_FINALIZER);
    await db.restart();
    await eventually(
      async () => {
        try {
          await get('during-outage');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      'the deleted workflow archived and gone',
      90_000,
    );
    expect(await archivedNamed('during-outage')).toBe(1);
    await eventually(async () => controller.readinessProblems().length === 0, '/readyz clear again');
  });

  // Last: it deletes the bed's namespace.
  it('a deleted namespace takes its archive along: a namespace made again under its name sees none of it', async () => {
    expect(await store.count({ namespaces: [bed.ns] })).toBeGreaterThan(0);
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name: bed.ns });
    await eventually(async () => (await store.count({ namespaces: [bed.ns] })) === 0, "the deleted namespace's archive removed", 120_000);
    expect(lines.some((l) => l.message === 'removed the archived workflows of a deleted namespace')).toBe(true);
  });
});
