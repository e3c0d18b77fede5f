import { describe, expect, it } from 'vitest';
import { storedForm } from './compressed-nodes.js';
import { hydratedStatus, needsHydration, nodeChanges, offloadedVersion, summaryNodes } from './offloaded-nodes.js';
import type { NodeStatus, WorkflowStatus } from './workflow-status.js';

const node = (id: string, phase: NodeStatus['phase'], more: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: id,
  displayName: id,
  type: 'Pod',
  phase,
  ...more,
});

describe('offloaded node status', () => {
  it('reads the version only when it is a positive integer', () => {
    expect(offloadedVersion({ offloadNodeStatusVersion: '7' })).toBe(7);
    expect(offloadedVersion({})).toBeUndefined();
    expect(offloadedVersion({ offloadNodeStatusVersion: 'fnv:123' })).toBeUndefined();
    expect(offloadedVersion({ offloadNodeStatusVersion: '0' })).toBeUndefined();
  });

  it('keeps the root, then the failed, then the running nodes, without their links, up to the limit', () => {
    const nodes: Record<string, NodeStatus> = {
      wf: node('wf', 'Running', { type: 'Steps', children: ['a'] }),
      a: node('a', 'Succeeded'),
      b: node('b', 'Running'),
      c: node('c', 'Failed'),
      d: node('d', 'Pending'),
    };
    expect(Object.keys(summaryNodes(nodes, 'wf'))).toEqual(['wf', 'c', 'b', 'd']);
    expect(summaryNodes(nodes, 'wf').wf!.children).toBeUndefined();
    expect(Object.keys(summaryNodes(nodes, 'wf', 2))).toEqual(['wf', 'c']);
  });

  it('finds what changed: a shallow copy with the same values is unchanged, a changed field or a new node is not', () => {
    const shared = { parameters: [{ name: 'p', value: '1' }] };
    const before = { a: node('a', 'Succeeded', { outputs: shared }), b: node('b', 'Running'), gone: node('gone', 'Succeeded') };
    const after = {
      a: { ...before.a },
      b: node('b', 'Succeeded', { finishedAt: '2026-01-01T00:00:00Z' }),
      c: node('c', 'Running'),
    };
    const changes = nodeChanges(before, after);
    expect(Object.keys(changes.changed).sort()).toEqual(['b', 'c']);
    expect(changes.removed).toEqual(['gone']);
    // A deep copy with equal content is unchanged too.
    expect(Object.keys(nodeChanges(before, { ...before, a: structuredClone(before.a) }).changed)).toEqual([]);
    expect(Object.keys(nodeChanges(undefined, after).changed).sort()).toEqual(['a', 'b', 'c']);
  });

  it('finds a removed node when the set before was the set after of an earlier call (its size remembered)', () => {
    const first = { a: node('a', 'Succeeded'), b: node('b', 'Running'), c: node('c', 'Running') };
    nodeChanges(undefined, first);
    const unchanged = { ...first };
    expect(nodeChanges(first, unchanged)).toEqual({ changed: {}, removed: [] });
    const { b: _b, ...withoutB } = unchanged;
    const next = { ...withoutB, d: node('d', 'Pending') };
    const changes = nodeChanges(unchanged, next);
    expect(changes.removed).toEqual(['b']);
    expect(Object.keys(changes.changed)).toEqual(['d']);
  });

  it("with the engine's delta, looks only at the touched ids and the ones that had failed, and gives the same answer", () => {
    const before: Record<string, NodeStatus> = {
      wf: node('wf', 'Running', { type: 'Steps', children: ['a', 'b', 'c'] }),
      a: node('a', 'Succeeded'),
      b: node('b', 'Running'),
      c: node('c', 'Failed'),
    };
    const after: Record<string, NodeStatus> = {
      ...before,
      wf: { ...before.wf!, children: ['a', 'b', 'c', 'd'] },
      b: node('b', 'Succeeded', { finishedAt: '2026-01-01T00:00:00Z' }),
      d: node('d', 'Running'),
    };
    const delta = { from: before, touched: new Set(['wf', 'b', 'd']), failed: new Set(['c']) };
    expect(nodeChanges(before, after, delta)).toEqual(nodeChanges(before, after));
    expect(Object.keys(summaryNodes(after, 'wf', undefined, delta))).toEqual(['wf', 'c', 'd']);
    expect(summaryNodes(after, 'wf', undefined, delta)).toEqual(summaryNodes(after, 'wf'));
    // Nodes it does not name are taken to be the objects it was given: a changed one left out is not seen.
    expect(Object.keys(nodeChanges(before, after, { ...delta, touched: new Set(['d']) }).changed)).toEqual(['d']);
    // A delta of another table is not used.
    expect(Object.keys(nodeChanges(before, after, { ...delta, from: { ...before }, touched: new Set() }).changed).sort()).toEqual([
      'b',
      'd',
      'wf',
    ]);
  });

  it('a hydrated status has every node and remembers the summary it is stored as', () => {
    const stored: WorkflowStatus = { phase: 'Running', offloadNodeStatusVersion: '3', nodes: { wf: node('wf', 'Running') } };
    expect(needsHydration(stored)).toBe(true);
    const all = { wf: node('wf', 'Running'), a: node('a', 'Succeeded') };
    const full = hydratedStatus(stored, all);
    expect(full.nodes).toBe(all);
    expect(needsHydration(full)).toBe(false);
    expect(storedForm(full)).toBe(stored);
    // Hydrating again keeps the first stored form.
    expect(storedForm(hydratedStatus(full, all))).toBe(stored);
  });
});
