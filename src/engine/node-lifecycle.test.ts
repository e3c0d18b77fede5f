import { describe, expect, it } from 'vitest';
import type { NodeStatus, WorkflowStatus } from '../api/index.js';
import { keepFinishedResults } from './node-lifecycle.js';

const node = (id: string, phase: NodeStatus['phase'], extra: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: id,
  displayName: id,
  type: 'Pod',
  phase,
  ...extra,
});

describe('keepFinishedResults', () => {
  it('passes a status through that keeps every final node', () => {
    const stored: WorkflowStatus = {
      phase: 'Running',
      nodes: { a: node('a', 'Succeeded', { finishedAt: 't1' }), b: node('b', 'Running') },
    };
    const next: WorkflowStatus = {
      phase: 'Running',
      nodes: { a: node('a', 'Succeeded', { finishedAt: 't1' }), b: node('b', 'Failed'), c: node('c', 'Pending') },
    };
    expect(keepFinishedResults(stored, next)).toEqual({ status: next, restored: [] });
  });

  it('puts back a final node that was reverted, changed or dropped', () => {
    const a = node('a', 'Succeeded', { finishedAt: 't1', outputs: { parameters: [{ name: 'x', value: '1' }] } });
    const b = node('b', 'Failed', { finishedAt: 't2' });
    const stored: WorkflowStatus = { phase: 'Running', nodes: { a, b } };
    const next: WorkflowStatus = { phase: 'Running', nodes: { a: node('a', 'Running'), c: node('c', 'Pending') } };
    const out = keepFinishedResults(stored, next);
    expect(out.restored.sort()).toEqual(['a', 'b']);
    expect(out.status.nodes).toEqual({ a, b, c: node('c', 'Pending') });
    expect(next.nodes!.a.phase).toBe('Running'); // input not mutated
  });

  it('keeps a finished workflow finished', () => {
    const stored: WorkflowStatus = { phase: 'Succeeded', finishedAt: 't', nodes: {} };
    expect(keepFinishedResults(stored, { phase: 'Running', nodes: {} })).toEqual({ status: stored, restored: ['(workflow)'] });
  });
});
