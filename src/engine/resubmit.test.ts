import { describe, expect, it } from 'vitest';
import { LABEL_COMPLETED, LABEL_PHASE, LABEL_RESUBMITTED_FROM, type Workflow, type WorkflowSpec } from '../api/index.js';
import { nodeIdFor } from './node-naming.js';
import { memoizedStatus, ResubmitError, resubmittedWorkflow } from './resubmit.js';
import { World } from './test-world.js';

const old: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: {
    name: 'build-x7k2p',
    namespace: 'ci',
    uid: 'u-1',
    resourceVersion: '42',
    labels: { team: 'a', [LABEL_PHASE]: 'Failed', [LABEL_COMPLETED]: 'true' },
    annotations: { note: 'n' },
  },
  spec: {
    entrypoint: 'main',
    shutdown: 'Stop',
    suspend: true,
    arguments: {
      parameters: [
        { name: 'rev', value: 'abc' },
        { name: 'mode', valueFrom: { configMapKeyRef: { name: 'm', key: 'k' } } },
      ],
    },
    templates: [{ name: 'main', container: { image: 'busybox', command: ['true'] } }],
  },
  status: { phase: 'Failed' },
};

describe('resubmittedWorkflow', () => {
  it('makes a new workflow from the old: same spec, user labels and annotations, a new name, the origin in a label', () => {
    const wf = resubmittedWorkflow(old);
    expect(wf.metadata).toEqual({
      generateName: 'build-x7k2p-',
      namespace: 'ci',
      labels: { team: 'a', [LABEL_RESUBMITTED_FROM]: 'build-x7k2p' },
      annotations: { note: 'n' },
    });
    expect(wf.status).toBeUndefined();
    expect(wf.spec.templates).toEqual(old.spec.templates);
  });

  it('runs whatever the old one was told at the end (no shutdown, not suspended)', () => {
    const wf = resubmittedWorkflow(old);
    expect(wf.spec.shutdown).toBeUndefined();
    expect(wf.spec.suspend).toBeUndefined();
  });

  it('sets new argument values by name (a valueFrom gives way to the value) and leaves the old workflow alone', () => {
    const wf = resubmittedWorkflow(old, { parameters: { rev: 'def', mode: 'fast' } });
    expect(wf.spec.arguments?.parameters).toEqual([
      { name: 'rev', value: 'def' },
      { name: 'mode', value: 'fast' },
    ]);
    expect(old.spec.arguments?.parameters?.[0]).toEqual({ name: 'rev', value: 'abc' });
  });

  it('refuses an argument the workflow does not have, naming it and the ones it has', () => {
    expect(() => resubmittedWorkflow(old, { parameters: { revision: 'x' } })).toThrow(ResubmitError);
    expect(() => resubmittedWorkflow(old, { parameters: { revision: 'x' } })).toThrow(
      'has no argument "revision" (its arguments: rev, mode)',
    );
  });
});

describe('memoizedStatus', () => {
  const spec: WorkflowSpec = {
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'a', template: 'echo' }], [{ name: 'b', template: 'echo' }]] },
      { name: 'echo', container: { image: 'alpine', command: ['true'] } },
    ],
  };
  function failedRun(): World {
    const w = new World(spec, { name: 'old' });
    w.reconcile();
    w.succeedPod('a', { result: 'from a' });
    w.reconcile();
    w.failPod('b');
    w.reconcile();
    return w;
  }

  it('keeps the succeeded steps under the new name, so only the failed one runs again', () => {
    const old = failedRun();
    expect(old.status.phase).toBe('Failed');
    const status = memoizedStatus(old.workflow, 'old-n3w');
    const names = Object.values(status.nodes ?? {}).map((n) => [n.name, n.phase]);
    expect(names.sort()).toEqual([
      ['old-n3w', 'Running'],
      ['old-n3w[0]', 'Succeeded'],
      ['old-n3w[0].a', 'Succeeded'],
      ['old-n3w[1]', 'Running'],
    ]);
    for (const n of Object.values(status.nodes ?? {})) {
      expect(n.id).toBe(nodeIdFor('old-n3w', n.name));
      expect(n.podName).toBeUndefined();
      for (const c of n.children ?? []) expect(status.nodes?.[c], `${n.name} → ${c}`).toBeDefined();
    }

    const next = new World(spec, { name: 'old-n3w' });
    next.workflow.status = status;
    next.reconcile();
    expect([...next.created.values()].map((c) => c.nodeId)).toEqual([nodeIdFor('old-n3w', 'old-n3w[1].b')]);
    next.succeedPod('b');
    next.reconcile();
    expect(next.status.phase).toBe('Succeeded');
    expect(next.node('a').outputs?.result).toBe('from a');
  });

  it('runs on from where a workflow stopped between steps (no step failed)', () => {
    const old = new World(structuredClone(spec), { name: 'old' });
    old.reconcile();
    old.succeedPod('a');
    old.workflow.spec.shutdown = 'Stop';
    old.reconcile();
    expect(old.status.phase).toBe('Failed');
    expect(old.created.size).toBe(1);
    const next = new World(spec, { name: 'old-2' });
    next.workflow.status = memoizedStatus(old.workflow, 'old-2');
    next.reconcile();
    expect([...next.created.values()].map((c) => c.nodeId)).toEqual([nodeIdFor('old-2', 'old-2[1].b')]);
  });

  it('refuses a workflow that did not fail, saying so', () => {
    const w = new World(spec, { name: 'fine' });
    w.reconcile();
    for (let i = 0; i < 3; i++) {
      w.succeedAll();
      w.reconcile();
    }
    expect(w.status.phase).toBe('Succeeded');
    expect(() => memoizedStatus(w.workflow, 'fine-2')).toThrow(
      new ResubmitError(
        'Workflow ns/fine is Succeeded: only a workflow that ended Failed or Error can be resubmitted memoized',
        'precondition',
      ),
    );
  });
});
