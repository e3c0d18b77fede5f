import { describe, expect, it } from 'vitest';
import type { Workflow } from '../api/index.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { PODS, WORKFLOWS } from '../kube/resource.js';
import { changeRunningWorkflow, OperationRefused, retryFailedWorkflow } from './index.js';

const wf = (phase: string, extra: Partial<Workflow['spec']> = {}): Workflow =>
  ({
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'w', namespace: 'ns' },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox', command: ['true'] } }], ...extra },
    status: {
      phase,
      nodes: {
        r: { id: 'r', name: 'w', displayName: 'w', type: 'Pod', phase: phase === 'Running' ? 'Running' : 'Failed', podName: 'w-pod' },
      },
    },
  }) as Workflow;

describe('operations on a workflow the controller keeps writing', () => {
  it('stop reads again and retries when the controller wrote between the read and the patch (409)', async () => {
    const fake = new FakeKubeClient();
    fake.seed(WORKFLOWS, wf('Running'));
    fake.failNext(2, 409, { verb: 'patch', resource: 'workflows.plugflow.io' });
    const stored = await changeRunningWorkflow(fake.asClient(), 'ns', 'w', 'stop');
    expect(stored.spec.shutdown).toBe('Stop');
    expect(fake.callsOf('get', 'workflows.plugflow.io')).toHaveLength(3);
  });

  it('stop of a finished workflow changes nothing and says why', async () => {
    const fake = new FakeKubeClient();
    fake.seed(WORKFLOWS, wf('Succeeded'));
    await expect(changeRunningWorkflow(fake.asClient(), 'ns', 'w', 'stop')).rejects.toThrow(OperationRefused);
    expect(fake.callsOf('patch')).toHaveLength(0);
  });

  it('retry of a stopped workflow: clears spec.shutdown (retrying a 409), deletes the failed pod, then writes the Running status and its label in one patch', async () => {
    const fake = new FakeKubeClient();
    fake.seed(WORKFLOWS, wf('Failed', { shutdown: 'Stop' }));
    fake.seed(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'w-pod', namespace: 'ns' } });
    fake.failNext(1, 409, { verb: 'patch', resource: 'workflows.plugflow.io' });
    const { workflow, rerun } = await retryFailedWorkflow(fake.asClient(), 'ns', 'w');
    expect(rerun).toEqual(['w']);
    expect(workflow.spec.shutdown).toBeUndefined();
    expect(workflow.status?.phase).toBe('Running');
    expect(workflow.status?.nodes).toEqual({});
    const order = fake.calls
      .filter((c) => c.code === 200 && c.verb !== 'get')
      .map((c) => `${c.verb} ${c.resource}${c.subresource ? `/${c.subresource}` : ''}`);
    expect(order).toEqual(['patch workflows.plugflow.io', 'delete pods', 'patch workflows.plugflow.io']);
  });
});
