import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import { isNotFound } from '../kube/errors.js';
import { PERSISTENT_VOLUME_CLAIMS, POD_DISRUPTION_BUDGETS, WORKFLOWS } from '../kube/resource.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { createLogger } from '../log/logger.js';
import { createWorkflowObjects, deleteWorkflowObjects } from './workflow-objects.js';

const log = createLogger('test', 'error');
const claim: EngineAction = {
  kind: 'createPVC',
  claim: { metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
};

async function setup() {
  const fake = new FakeKubeClient();
  const wf = await fake.create<Workflow & { metadata: { uid?: string } }>(WORKFLOWS, 'ns', {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'wf', namespace: 'ns' },
    spec: {},
  });
  return { fake, client: fake.asClient(), wf: wf as never };
}

describe('workflow-objects', () => {
  it('creates the claim and the budget owned by the workflow; a second apply meets AlreadyExists and is fine', async () => {
    const { fake, client, wf } = await setup();
    const actions: EngineAction[] = [claim, { kind: 'createPDB', spec: { minAvailable: 1 } }];
    await createWorkflowObjects(client, wf, actions);
    await createWorkflowObjects(client, wf, actions);
    const pvc = await fake.get<{ metadata: { ownerReferences: Array<{ name: string }>; labels: Record<string, string> } }>(
      PERSISTENT_VOLUME_CLAIMS,
      'ns',
      'wf-work',
    );
    expect(pvc.metadata.ownerReferences[0]!.name).toBe('wf');
    const pdb = await fake.get<{ spec: Record<string, unknown> }>(POD_DISRUPTION_BUDGETS, 'ns', 'wf');
    expect(pdb.spec).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { 'workflows.plugflow.io/workflow': 'wf', 'workflows.plugflow.io/component': 'step' } },
    });
  });

  it('throws on a real refusal, so the applier creates no pod without its claim', async () => {
    const { fake, client, wf } = await setup();
    fake.failNext(1, 403, { verb: 'create', resource: 'persistentvolumeclaims' });
    await expect(createWorkflowObjects(client, wf, [claim])).rejects.toThrow(/403|injected/);
  });

  it('deletes claims, budget and the workflow; NotFound is fine', async () => {
    const { fake, client, wf } = await setup();
    await createWorkflowObjects(client, wf, [claim]);
    const del: EngineAction[] = [
      { kind: 'deletePVC', claimTemplate: 'work', reason: 'r' },
      { kind: 'deletePDB' },
      { kind: 'deleteWorkflow', reason: 'ttl' },
    ];
    await deleteWorkflowObjects(client, wf, del, log);
    await deleteWorkflowObjects(client, wf, del, log);
    for (const [type, name] of [
      [PERSISTENT_VOLUME_CLAIMS, 'wf-work'],
      [WORKFLOWS, 'wf'],
    ] as const)
      await expect(fake.get(type, 'ns', name)).rejects.toSatisfy(isNotFound);
  });

  it('sets workflowMetadata labels and annotations by merge patch', async () => {
    const { fake, client, wf } = await setup();
    await createWorkflowObjects(client, wf, [{ kind: 'setWorkflowMetadata', labels: { team: 'blue' }, annotations: { a: 'b' } }]);
    const got = await fake.get<Workflow>(WORKFLOWS, 'ns', 'wf');
    expect(got.metadata.labels).toEqual({ team: 'blue' });
    expect(got.metadata.annotations).toEqual({ a: 'b' });
  });
});
