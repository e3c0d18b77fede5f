import { describe, expect, it } from 'vitest';
import { CREATOR, summaryOf } from './workflow-summary.js';
import type { Workflow } from './types.js';

const wf = (metadata: Partial<Workflow['metadata']>, spec: Workflow['spec'] = {}): Workflow => ({
  metadata: { name: 'wf', namespace: 'ns', ...metadata },
  spec,
});

describe('the workflow summary', () => {
  it('lists the arguments as name = value, one taken from elsewhere saying from where', () => {
    const s = summaryOf(
      wf(
        {},
        {
          arguments: {
            parameters: [{ name: 'who', value: 'Ada' }, { name: 'cfg', valueFrom: { configMapKeyRef: { key: 'k' } } }, { name: 'none' }],
          },
        },
      ),
    );
    expect(s.parameters).toEqual([
      ['who', 'Ada'],
      ['cfg', '(from configMapKeyRef)'],
      ['none', ''],
    ]);
  });

  it('sorts labels and annotations by key, and names the creator the server recorded', () => {
    const s = summaryOf(wf({ labels: { z: '1', a: '2' }, annotations: { [CREATOR]: 'alice', note: 'x' } }));
    expect(s.labels).toEqual([
      ['a', '2'],
      ['z', '1'],
    ]);
    expect(s.annotations.map(([k]) => k)).toEqual(['note', CREATOR]);
    expect(s.creator).toBe('alice');
  });

  it("reads the peer's creator label, preferring its user name, and says when nobody is recorded", () => {
    expect(summaryOf(wf({ labels: { 'workflows.argoproj.io/creator': 'system-serviceaccount-x' } })).creator).toBe(
      'system-serviceaccount-x',
    );
    expect(
      summaryOf(wf({ labels: { 'workflows.argoproj.io/creator': 'id-1', 'workflows.argoproj.io/creator-preferred-username': 'bob' } }))
        .creator,
    ).toBe('bob');
    expect(summaryOf(wf({})).creator).toBeUndefined();
  });

  it('names the template it was submitted from', () => {
    expect(summaryOf(wf({}, { workflowTemplateRef: { name: 'greet' } })).template).toBe('WorkflowTemplate greet');
    expect(summaryOf(wf({}, { workflowTemplateRef: { name: 'g', clusterScope: true } })).template).toBe('ClusterWorkflowTemplate g');
  });
});
