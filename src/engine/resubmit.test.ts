import { describe, expect, it } from 'vitest';
import { LABEL_COMPLETED, LABEL_PHASE, LABEL_RESUBMITTED_FROM, type Workflow } from '../api/index.js';
import { ResubmitError, resubmittedWorkflow } from './resubmit.js';

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
