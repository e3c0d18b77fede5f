import { describe, expect, it } from 'vitest';
import { LABEL_CLUSTER_WORKFLOW_TEMPLATE, LABEL_WORKFLOW_EVENT_BINDING, LABEL_WORKFLOW_TEMPLATE } from '../api/index.js';
import { defaultWorkflowName, randomSuffix, workflowFromSubmission, type Submission } from './workflow-from-event.js';

const at = new Date('2025-03-04T05:06:07.890Z');

describe('default workflow name', () => {
  it('is the template name, the UTC second and six random characters', () => {
    expect(defaultWorkflowName('build', at, 'a1b2c3')).toBe('build-20250304050607-a1b2c3');
  });

  it('stays within 63 characters and never ends the template part in a dash', () => {
    const name = defaultWorkflowName(`${'x'.repeat(40)}-${'y'.repeat(30)}`, at, 'zzzzzz');
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^x{40}-20250304050607-zzzzzz$/);
  });

  it('draws fresh characters each time, so a burst in one second does not repeat names', () => {
    const names = new Set(Array.from({ length: 5000 }, () => defaultWorkflowName('t', at)));
    expect(names.size).toBe(5000);
    expect(randomSuffix()).toMatch(/^[a-z0-9]{6}$/);
  });
});

describe('the submitted workflow', () => {
  const base: Submission = {
    binding: { namespace: 'ns', name: 'on-push' },
    template: { name: 'build', clusterScope: false },
    parameters: [{ name: 'repo', value: 'plugflow' }],
    labels: { team: 'a' },
    annotations: {},
  };

  it('references the template, passes the parameters and carries the template and binding labels', () => {
    expect(workflowFromSubmission(base, 'build-1')).toEqual({
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: {
        name: 'build-1',
        namespace: 'ns',
        labels: { team: 'a', [LABEL_WORKFLOW_TEMPLATE]: 'build', [LABEL_WORKFLOW_EVENT_BINDING]: 'on-push' },
      },
      spec: { workflowTemplateRef: { name: 'build' }, arguments: { parameters: [{ name: 'repo', value: 'plugflow' }] } },
    });
  });

  it('marks a cluster template with clusterScope and its own label, and keeps annotations', () => {
    const wf = workflowFromSubmission(
      { ...base, template: { name: 'ctl', clusterScope: true }, annotations: { note: 'x' }, parameters: [] },
      'n',
    );
    expect(wf.spec).toEqual({ workflowTemplateRef: { name: 'ctl', clusterScope: true } });
    expect(wf.metadata.labels).toMatchObject({ [LABEL_CLUSTER_WORKFLOW_TEMPLATE]: 'ctl' });
    expect(wf.metadata.labels?.[LABEL_WORKFLOW_TEMPLATE]).toBeUndefined();
    expect(wf.metadata.annotations).toEqual({ note: 'x' });
  });

  it('does not let a binding overwrite the provenance labels', () => {
    const wf = workflowFromSubmission({ ...base, labels: { [LABEL_WORKFLOW_EVENT_BINDING]: 'forged' } }, 'n');
    expect(wf.metadata.labels?.[LABEL_WORKFLOW_EVENT_BINDING]).toBe('on-push');
  });
});
