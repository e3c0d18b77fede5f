import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';
import { validateWorkflow } from './validate.js';

const spec = (workflowMetadata: WorkflowSpec['workflowMetadata']): WorkflowSpec => ({
  entrypoint: 'c',
  arguments: { parameters: [{ name: 'team', value: 'Blue' }] },
  workflowMetadata,
  templates: [{ name: 'c', container: { image: 'alpine', command: ['true'] } }],
});

describe('spec.workflowMetadata', () => {
  it('sets labels, annotations and labelsFrom expressions over the workflow variables, once they are in place no more', () => {
    const w = new World(
      spec({
        labels: { app: 'x' },
        annotations: { note: 'hello world' },
        labelsFrom: { team: { expression: 'lower(workflow.parameters.team) + "-" + workflow.name' } },
      }),
    );
    w.reconcile();
    expect(w.lastActions[0]).toEqual({
      kind: 'setWorkflowMetadata',
      labels: { app: 'x', team: 'blue-wf' },
      annotations: { note: 'hello world' },
    });
    expect(w.workflow.metadata.labels).toEqual({ app: 'x', team: 'blue-wf' });
    w.reconcile();
    expect(w.lastActions.map((a) => a.kind)).not.toContain('setWorkflowMetadata');
  });

  it('fails the workflow naming the label when the expression fails or gives an invalid label value', () => {
    const bad = new World(spec({ labelsFrom: { team: { expression: 'workflow.parameters.team + " x"' } } }));
    bad.reconcile();
    expect(bad.status.phase).toBe('Failed');
    expect(bad.status.message).toMatch(
      /spec\.workflowMetadata\.labelsFrom\.team\.expression gave "Blue x", which is not a valid label value/,
    );
    const broken = new World(spec({ labelsFrom: { team: { expression: 'workflow.parameters.team +' } } }));
    broken.reconcile();
    expect(broken.status.message).toMatch(/^spec\.workflowMetadata\.labelsFrom\.team\.expression/);
  });

  it('refuses invalid label names and literal values at validation', () => {
    const msgs = validateWorkflow({ metadata: { name: 'wf' }, spec: spec({ labels: { 'bad key!': 'v', ok: 'not valid!' } }) }, {}).map(
      (e) => e.message,
    );
    expect(msgs).toContain('spec.workflowMetadata.labels.bad key! is not a valid label name');
    expect(msgs.join()).toMatch(/spec\.workflowMetadata\.labels\.ok has "not valid!", which is not a valid label value/);
  });
});
