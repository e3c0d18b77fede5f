import { describe, expect, it } from 'vitest';
import { groupsToExpand, searchNodes, step } from './node-search.js';
import type { NodeStatus } from '../types.js';

const n = (id: string, extra: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: `wf.${id}`,
  displayName: id,
  type: 'Pod',
  phase: 'Succeeded',
  ...extra,
});

const nodes = Object.fromEntries(
  [
    n('wf', { name: 'wf', type: 'Steps', children: ['loop'], startedAt: '2024-01-01T00:00:00Z' }),
    n('loop', { type: 'StepGroup', children: ['item-1', 'item-0'], startedAt: '2024-01-01T00:00:01Z' }),
    n('item-0', { templateName: 'crunch', phase: 'Failed', startedAt: '2024-01-01T00:00:02Z' }),
    n('item-1', { templateName: 'crunch', startedAt: '2024-01-01T00:00:03Z' }),
    n('fetch', { templateName: 'download', startedAt: '2024-01-01T00:00:01Z' }),
  ].map((x) => [x.id, x]),
);

describe('finding nodes in the graph', () => {
  it('matches the name, display name, template or phase, any case, in the order they started', () => {
    expect(searchNodes(nodes, 'CRUNCH')).toEqual(['item-0', 'item-1']);
    expect(searchNodes(nodes, 'failed')).toEqual(['item-0']);
    expect(searchNodes(nodes, 'fet')).toEqual(['fetch']);
    expect(searchNodes(nodes, 'wf.item')).toEqual(['item-0', 'item-1']);
    expect(searchNodes(nodes, '  ')).toEqual([]);
  });

  it('Enter steps to the next match, round and round; Shift+Enter back', () => {
    const m = ['a', 'b', 'c'];
    expect(step(m, undefined)).toBe('a');
    expect(step(m, 'a')).toBe('b');
    expect(step(m, 'c')).toBe('a');
    expect(step(m, 'a', true)).toBe('c');
    expect(step(m, 'gone')).toBe('a');
    expect(step([], 'a')).toBeUndefined();
  });

  it('names the collapsed groups that hide a match, outermost first', () => {
    expect(groupsToExpand(nodes, 'item-0', new Set(['loop']))).toEqual(['loop']);
    expect(groupsToExpand(nodes, 'item-0', new Set(['loop', 'wf']))).toEqual(['wf', 'loop']);
    expect(groupsToExpand(nodes, 'fetch', new Set(['loop']))).toEqual([]);
  });
});
