import { describe, expect, it } from 'vitest';
import type { NodeStatus, WorkflowStatus } from '../api/index.js';
import { nodeEvents } from './node-events.js';

const node = (id: string, phase: NodeStatus['phase'], extra: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: `wf.${id}`,
  displayName: id,
  type: 'Pod',
  phase,
  ...extra,
});
const status = (...nodes: NodeStatus[]): WorkflowStatus => ({ nodes: Object.fromEntries(nodes.map((n) => [n.id, n])) });

describe('node events', () => {
  it('names each node whose phase became Running, Succeeded, Failed or Error, in the order they started', () => {
    const before = status(node('a', 'Running', { startedAt: '1' }), node('b', 'Pending', { startedAt: '2' }));
    const after = status(
      node('b', 'Failed', { startedAt: '2', message: 'exit code 1' }),
      node('a', 'Succeeded', { startedAt: '1' }),
      node('c', 'Running', { startedAt: '3', type: 'DAG' }),
    );
    expect(nodeEvents(before, after)).toEqual([
      { type: 'Normal', reason: 'WorkflowNodeSucceeded', message: 'Succeeded node wf.a', nodeName: 'wf.a', nodeType: 'Pod' },
      { type: 'Warning', reason: 'WorkflowNodeFailed', message: 'Failed node wf.b: exit code 1', nodeName: 'wf.b', nodeType: 'Pod' },
      { type: 'Normal', reason: 'WorkflowNodeRunning', message: 'Running node wf.c', nodeName: 'wf.c', nodeType: 'DAG' },
    ]);
  });

  it('says nothing for a phase that did not change, nor for Pending, Skipped and Omitted', () => {
    const before = status(node('a', 'Running'));
    const after = status(node('a', 'Running'), node('p', 'Pending'), node('s', 'Skipped'), node('o', 'Omitted'));
    expect(nodeEvents(before, after)).toEqual([]);
  });

  it('an Error node is a Warning; a first status counts every node', () => {
    expect(nodeEvents(undefined, status(node('e', 'Error', { message: 'pod deleted' })))).toEqual([
      { type: 'Warning', reason: 'WorkflowNodeError', message: 'Error node wf.e: pod deleted', nodeName: 'wf.e', nodeType: 'Pod' },
    ]);
  });
});
