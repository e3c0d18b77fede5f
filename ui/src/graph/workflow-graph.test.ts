import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../types.js';
import { buildGraph, edgesOf } from './workflow-graph.js';
import { layout } from './layout.js';

function node(
  id: string,
  type: NodeStatus['type'],
  children: string[] = [],
  phase: NodeStatus['phase'] = 'Succeeded',
  displayName = id,
): NodeStatus {
  return { id, name: id, displayName, type, phase, children };
}

/** wf (Steps) → [0] (a) → [1] (b1..bN) → [2] (c) */
function steps(n: number): Record<string, NodeStatus> {
  const bs = Array.from({ length: n }, (_, i) => `b${i}`);
  const all = [
    node('wf', 'Steps', ['g0', 'g2', 'g1']),
    node('g0', 'StepGroup', ['a'], 'Succeeded', '[0]'),
    node('a', 'Pod'),
    node('g1', 'StepGroup', bs, 'Running', '[1]'),
    ...bs.map((b, i) => node(b, 'Pod', [], i === 0 ? 'Failed' : 'Succeeded')),
    node('g2', 'StepGroup', ['c'], 'Pending', '[2]'),
    node('c', 'Pod', [], 'Pending'),
  ];
  return Object.fromEntries(all.map((x) => [x.id, x]));
}

describe('the graph of a workflow', () => {
  it('chains the groups of a steps template in their order, not as siblings of the Steps node', () => {
    const e = edgesOf(steps(2));
    expect(e.get('wf')).toEqual(['g0']);
    expect(e.get('a')).toEqual(['g1']);
    expect(e.get('b0')).toEqual(['g2']);
    expect(e.get('b1')).toEqual(['g2']);
    expect(e.get('g2')).toEqual(['c']);
  });

  it('draws every node of a small workflow, groups as dots', () => {
    const g = buildGraph(steps(2));
    expect(g.nodes.map((n) => n.id).sort()).toEqual(['a', 'b0', 'b1', 'c', 'g0', 'g1', 'g2', 'wf']);
    expect(g.nodes.find((n) => n.id === 'g1')!.kind).toBe('group');
    expect(g.edges).toContainEqual({ from: 'g1', to: 'b0' });
  });

  it('collapses a wide fan-out into one box with counts by phase, and keeps what follows it', () => {
    const g = buildGraph(steps(50));
    const box = g.nodes.find((n) => n.kind === 'collapsed')!;
    expect(box).toMatchObject({ of: 'g1', count: 50, phases: { Failed: 1, Succeeded: 49 }, phase: 'Failed', label: '50 nodes' });
    expect(g.nodes.some((n) => n.id === 'b7')).toBe(false);
    expect(g.edges).toContainEqual({ from: 'g1', to: box.id });
    expect(g.edges).toContainEqual({ from: box.id, to: 'g2' });
    expect(g.nodes.some((n) => n.id === 'c')).toBe(true);
  });

  it('shows every child of a group the user expanded', () => {
    const g = buildGraph(steps(50), { expanded: new Set(['g1']) });
    expect(g.nodes.filter((n) => n.id.startsWith('b'))).toHaveLength(50);
    expect(g.nodes.some((n) => n.kind === 'collapsed')).toBe(false);
  });

  it('keeps a DAG task that depends on every item of a collapsed loop, and hides what only one item leads to', () => {
    const items = Array.from({ length: 20 }, (_, i) => `i${i}`);
    const nodes = Object.fromEntries(
      [
        node('wf', 'DAG', ['loop']),
        node('loop', 'TaskGroup', items),
        ...items.map((i) => node(i, 'Retry', [`${i}-try`, 'z'])),
        ...items.map((i) => node(`${i}-try`, 'Pod')),
        node('z', 'Pod'),
      ].map((x) => [x.id, x]),
    );
    const ids = buildGraph(nodes).nodes.map((n) => n.id);
    expect(ids).toContain('z');
    expect(ids).not.toContain('i3-try');
  });

  it('lays out every node inside the drawing', () => {
    const laid = layout(buildGraph(steps(3)));
    expect(laid.nodes).toHaveLength(9);
    for (const n of laid.nodes) {
      expect(n.x - n.width / 2).toBeGreaterThanOrEqual(0);
      expect(n.y + n.height / 2).toBeLessThanOrEqual(laid.height);
    }
    expect(laid.edges.every((e) => e.points.length >= 2)).toBe(true);
  });
});

describe('the layout of a large graph', () => {
  /** `layers` × `width` nodes, each leading to two of the next layer, plus a root. */
  function layered(layers: number, width: number) {
    const nodes = [{ id: 'root', label: 'root', phase: 'Succeeded' as const, kind: 'node' as const }];
    const edges: { from: string; to: string }[] = [];
    for (let l = 0; l < layers; l++)
      for (let w = 0; w < width; w++) {
        nodes.push({ id: `${l}-${w}`, label: `${l}-${w}`, phase: 'Succeeded', kind: 'node' });
        if (l === 0) edges.push({ from: 'root', to: `0-${w}` });
        else edges.push({ from: `${l - 1}-${w}`, to: `${l}-${w}` }, { from: `${l - 1}-${(w + 1) % width}`, to: `${l}-${w}` });
      }
    return { nodes, edges };
  }

  it('puts every node below its parents and no two nodes of a rank on each other', () => {
    const laid = layout(layered(100, 10));
    expect(laid.nodes).toHaveLength(1001);
    const at = new Map(laid.nodes.map((n) => [n.id, n]));
    for (const e of laid.edges) expect(at.get(e.to)!.y).toBeGreaterThan(at.get(e.from)!.y);
    const byRow = new Map<number, typeof laid.nodes>();
    for (const n of laid.nodes) byRow.set(n.y, [...(byRow.get(n.y) ?? []), n]);
    expect(byRow.size).toBe(101);
    for (const row of byRow.values()) {
      const xs = row.map((n) => n.x).sort((a, b) => a - b);
      for (let i = 1; i < xs.length; i++) expect(xs[i] - xs[i - 1]).toBeGreaterThanOrEqual(168);
    }
    for (const n of laid.nodes) expect(n.x - n.width / 2).toBeGreaterThanOrEqual(0);
  });
});
