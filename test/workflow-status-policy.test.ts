/**
 * The Workflow CRD has no status subresource (status and its labels go in one write), so
 * manifests/base/workflow-status-policy.yaml guards `.status` on the real API server: only an
 * account that may `update workflows/status` sets or changes it. A user who may create and patch
 * workflows changes their spec and labels as before, and is refused, with the workflow named, when
 * a create or a write touches the status; granted workflows/status, the same write passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, type Workflow } from '../src/api/index.js';
import { KubeClient as KubeClientImpl } from '../src/kube/client.js';
import { errorMessage } from '../src/log/error-message.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, kubeConfigForUser } from './support/cluster.js';
import { grantRole, rule } from './support/server.js';

const wf = (name: string, status?: Workflow['status']): Workflow => ({
  apiVersion: API_VERSION,
  kind: 'Workflow',
  metadata: { name },
  spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
  ...(status ? { status } : {}),
});

describe('the policy guarding Workflow status', () => {
  let ns: string;
  let admin: KubeClientImpl;
  let dave: KubeClientImpl; // creates, patches and updates workflows; not their status
  let erin: KubeClientImpl; // the same, and update on workflows/status

  beforeAll(async () => {
    ns = await createTestNamespace('status-policy');
    admin = await KubeClientImpl.fromKubeConfig(adminKubeConfig());
    dave = await KubeClientImpl.fromKubeConfig(kubeConfigForUser('dave'));
    erin = await KubeClientImpl.fromKubeConfig(kubeConfigForUser('erin'));
    const writer = [rule('workflows', 'get', 'list', 'create', 'patch', 'update')];
    await grantRole(ns, 'dave', 'wf-writer', writer);
    await grantRole(ns, 'erin', 'wf-status-writer', [...writer, rule('workflows/status', 'update')]);
  });

  afterAll(async () => {
    await Promise.all([admin, dave, erin].map((c) => c?.close()));
    await deleteTestNamespace(ns);
  });

  const refusal = async (write: Promise<unknown>) => errorMessage(await write.then(() => undefined).catch((e: unknown) => e));

  it('a writer of workflows changes spec and labels as before, and may not set or change the status', async () => {
    await dave.create(WORKFLOWS, ns, wf('plain'));
    const labelled = await dave.mergePatch<Workflow>(WORKFLOWS, ns, 'plain', {
      metadata: { labels: { team: 'a' } },
      spec: { suspend: true },
    });
    expect(labelled.metadata?.labels?.team).toBe('a');
    const message = await refusal(dave.mergePatch(WORKFLOWS, ns, 'plain', { status: { phase: 'Succeeded' } }));
    expect(message).toContain(`the status of workflow ${ns}/plain is written by plugflow's controller`);
    expect(message).toContain('update on workflows/status');
    // A whole-object update that drops or rewrites the status is refused the same way.
    await admin.mergePatch(WORKFLOWS, ns, 'plain', { status: { phase: 'Running' } });
    const current = await dave.get<Workflow>(WORKFLOWS, ns, 'plain');
    expect(await refusal(dave.replace(WORKFLOWS, ns, 'plain', { ...current, status: undefined }))).toContain('is written by plugflow');
    expect(await refusal(dave.replace(WORKFLOWS, ns, 'plain', { ...current, status: { phase: 'Failed' } }))).toContain(
      'is written by plugflow',
    );
    // The same object with the status untouched passes.
    await dave.replace(WORKFLOWS, ns, 'plain', { ...current, metadata: { ...current.metadata, labels: { team: 'b' } } });
    expect((await admin.get<Workflow>(WORKFLOWS, ns, 'plain')).status?.phase).toBe('Running');
  });

  it('a workflow created with a status is refused, naming it; generateName too', async () => {
    expect(await refusal(dave.create(WORKFLOWS, ns, wf('born-done', { phase: 'Succeeded' })))).toContain(
      `the status of workflow ${ns}/born-done is written`,
    );
    const generated = { ...wf('x', { phase: 'Succeeded' }), metadata: { generateName: 'gen-' } };
    // The API server names a generated workflow before admission, so the refusal names it too.
    expect(await refusal(dave.create(WORKFLOWS, ns, generated))).toMatch(
      new RegExp(`the status of workflow ${ns}/gen-[a-z0-9]{5} is written`),
    );
  });

  it('an account that may update workflows/status sets and changes it (the controller, a retry)', async () => {
    await erin.create(WORKFLOWS, ns, wf('retried', { phase: 'Running' }));
    const changed = await erin.mergePatch<Workflow>(WORKFLOWS, ns, 'retried', {
      status: { phase: 'Failed' },
      metadata: { labels: { a: 'b' } },
    });
    expect(changed.status?.phase).toBe('Failed');
  });
});
