import { describe, expect, it } from 'vitest';
import { LABEL_COMPONENT, LABEL_NODE_ID, LABEL_WORKFLOW, type Workflow, type WorkflowTemplate } from '../api/index.js';
import type { CachedPod } from './caches.js';
import { buildObservations, type ObservationInputs } from './observations.js';

const wf: Workflow = {
  metadata: { name: 'w', namespace: 'ns', uid: 'uid-1' },
  spec: {
    entrypoint: 'main',
    templates: [{ name: 'main', steps: [[{ name: 'a', templateRef: { name: 'lib', template: 't' } }]] }],
  },
};

function pod(name: string, owner: string, extra: Partial<CachedPod> = {}, component = 'step'): CachedPod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels: { [LABEL_WORKFLOW]: 'w', [LABEL_NODE_ID]: `node-${name}`, [LABEL_COMPONENT]: component },
      ownerReferences: [{ apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', name: 'w', uid: owner }],
    },
    status: { phase: 'Running' },
    ...extra,
  };
}

const templates: Record<string, WorkflowTemplate> = {
  lib: {
    metadata: { name: 'lib', namespace: 'ns' },
    spec: { templates: [{ name: 't', steps: [[{ name: 'x', templateRef: { name: 'base', template: 'b', clusterScope: true } }]] }] },
  },
};

function inputs(extra: Partial<ObservationInputs> = {}): ObservationInputs {
  return {
    workflow: wf,
    pods: [],
    workflowTemplate: (ns, name) => (ns === 'ns' ? templates[name] : undefined),
    clusterWorkflowTemplate: (name) =>
      name === 'base' ? { metadata: { name: 'base' }, spec: { templates: [{ name: 'b', container: { image: 'x' } }] } } : undefined,
    now: new Date('2024-01-01T00:00:00Z'),
    pluginsEnabled: false,
    ...extra,
  };
}

/** The failed agent pod, named for the engine, which counts each failed pod once by uid. */
const agentPod = { podName: 'w-agent', podUID: 'uid-w-agent' };

describe('buildObservations', () => {
  it('keeps only pods owned by this workflow uid and splits off the agent pod', () => {
    const obs = buildObservations(
      inputs({
        pods: [pod('mine', 'uid-1'), pod('old-incarnation', 'uid-0'), pod('w-agent', 'uid-1', { status: { phase: 'Running' } }, 'agent')],
      }),
    );
    expect(obs.pods.map((p) => [p.podName, p.nodeId, p.phase])).toEqual([['mine', 'node-mine', 'Running']]);
    expect(obs.agent).toEqual({ phase: 'Running' });
    expect(obs.now).toBe('2024-01-01T00:00:00.000Z');
    expect(obs.pluginsEnabled).toBe(false);
  });

  it('reports a failed agent pod with the reason its containers give, and a deleted one as failed', () => {
    const failed = pod(
      'w-agent',
      'uid-1',
      {
        status: {
          phase: 'Failed',
          containerStatuses: [
            {
              name: 'main',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 2, reason: 'Error', message: 'boom' } },
            },
          ],
        },
      },
      'agent',
    );
    expect(buildObservations(inputs({ pods: [failed] })).agent).toEqual({
      phase: 'Failed',
      message: 'agent pod w-agent failed: main: Error (exit code 2): boom',
      replacing: true,
      ...agentPod,
    });
    const deleting = pod('w-agent', 'uid-1', { status: { phase: 'Running' } }, 'agent');
    deleting.metadata!.deletionTimestamp = new Date();
    expect(buildObservations(inputs({ pods: [deleting] })).agent).toEqual({
      phase: 'Failed',
      message: 'agent pod w-agent was deleted',
      replacing: true,
      deleted: true,
      ...agentPod,
    });
    // An agent pod that cannot be built or created is a recorded failure, final even over a failed pod.
    expect(buildObservations(inputs({ pods: [failed], agentFailure: 'gave up' })).agent).toEqual({ phase: 'Failed', message: 'gave up' });
  });

  it('reports a Running agent pod whose main container or a plugin sidecar died as failed', () => {
    const dead = pod(
      'w-agent',
      'uid-1',
      {
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'main',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 1, reason: 'Error', message: 'listen EADDRINUSE 0.0.0.0:9766' } },
            },
            { name: 'hello', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
          ],
        },
      },
      'agent',
    );
    expect(buildObservations(inputs({ pods: [dead] })).agent).toEqual({
      phase: 'Failed',
      message: 'agent pod w-agent failed: main: Error (exit code 1): listen EADDRINUSE 0.0.0.0:9766',
      replacing: true,
      ...agentPod,
    });
    const sidecarGone = pod(
      'w-agent',
      'uid-1',
      {
        status: {
          phase: 'Running',
          containerStatuses: [
            { name: 'main', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
            {
              name: 'hello',
              image: 'i',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 137, reason: 'Error' } },
            },
          ],
        },
      },
      'agent',
    );
    expect(buildObservations(inputs({ pods: [sidecarGone] })).agent).toEqual({
      phase: 'Failed',
      message: 'agent pod w-agent failed: hello: Error (exit code 137)',
      replacing: true,
      ...agentPod,
    });
    const running = pod(
      'w-agent',
      'uid-1',
      {
        status: {
          phase: 'Running',
          containerStatuses: [{ name: 'main', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } }],
        },
      },
      'agent',
    );
    expect(buildObservations(inputs({ pods: [running] })).agent).toEqual({ phase: 'Running' });
  });

  it('reports remembered create failures as failed pods, unless the pod exists after all', () => {
    const failures = new Map([
      ['gone', { nodeId: 'n1', message: 'the pod was refused: 422' }],
      ['mine', { nodeId: 'node-mine', message: 'stale' }],
    ]);
    const obs = buildObservations(inputs({ pods: [pod('mine', 'uid-1')], podCreateFailures: failures, agentFailure: 'no agent for you' }));
    expect(obs.pods).toContainEqual({ podName: 'gone', nodeId: 'n1', phase: 'Failed', message: 'the pod was refused: 422' });
    expect(obs.pods.filter((p) => p.podName === 'mine').map((p) => p.phase)).toEqual(['Running']);
    expect(obs.agent).toEqual({ phase: 'Failed', message: 'no agent for you' });
  });

  it('turns TaskSet results into task observations, only for a TaskSet this workflow owns', () => {
    const ts = {
      metadata: {
        name: 'w',
        namespace: 'ns',
        ownerReferences: [{ apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', name: 'w', uid: 'uid-1' }],
      },
      spec: {},
      status: { nodes: { n1: { phase: 'Succeeded' as const, outputs: { result: 'r' } }, n2: { message: 'no phase yet' } } },
    };
    expect(buildObservations(inputs({ taskSet: ts })).tasks).toEqual([{ nodeId: 'n1', phase: 'Succeeded', outputs: { result: 'r' } }]);
    const foreign = { ...ts, metadata: { ...ts.metadata, ownerReferences: [{ ...ts.metadata.ownerReferences[0], uid: 'other' }] } };
    expect(buildObservations(inputs({ taskSet: foreign })).tasks).toEqual([]);
  });

  it('collects referenced templates transitively, leaving missing ones for the engine to report', () => {
    const obs = buildObservations(inputs());
    expect(Object.keys(obs.templates ?? {}).sort()).toEqual(['ClusterWorkflowTemplate/base', 'WorkflowTemplate/lib']);
    const none = buildObservations(inputs({ workflowTemplate: () => undefined }));
    expect(none.templates).toBeUndefined();
  });
});
