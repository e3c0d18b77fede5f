import { describe, expect, it } from 'vitest';
import { LARGE_GRAPH, layout } from './layout.js';
import type { Graph } from './workflow-graph.js';

const node = (id: string) => ({ id, label: id, phase: 'Succeeded' as const, kind: 'node' as const });

/** A root with `n` children, then one node after all of them (a step group and the next step). */
function fanOut(n: number): Graph {
  const kids = Array.from({ length: n }, (_, i) => `k${i}`);
  return {
    nodes: [node('root'), ...kids.map(node), node('next')],
    edges: [...kids.map((k) => ({ from: 'root', to: k })), ...kids.map((k) => ({ from: k, to: 'next' }))],
  };
}

const xs = (g: Graph, ids: string[]) => {
  const at = new Map(layout(g).nodes.map((n) => [n.id, n.x]));
  return ids.map((id) => at.get(id)!);
};

/** Whether the nodes come in reading order: left to right, then (a wrapped row) line by line. */
function inReadingOrder(g: Graph, ids: string[]): boolean {
  const at = new Map(layout(g).nodes.map((n) => [n.id, n]));
  return ids.every((id, i) => {
    if (i === 0) return true;
    const [p, q] = [at.get(ids[i - 1])!, at.get(id)!];
    return q.y > p.y || (q.y === p.y && q.x > p.x);
  });
}

describe('the order of siblings in the graph', () => {
  it('draws the children of a node left to right in declaration order, small graphs as large ones', () => {
    for (const n of [2, 4, 12, LARGE_GRAPH + 10]) {
      const kids = Array.from({ length: n }, (_, i) => `k${i}`);
      expect(inReadingOrder(fanOut(n), kids), `${n} children`).toBe(true);
    }
  });

  it('still untangles crossing edges where declaration order has them', () => {
    // a → c2, b → c1, with c1 declared before c2: drawn straight, the edges would cross.
    const g: Graph = {
      nodes: ['root', 'a', 'b', 'c1', 'c2'].map(node),
      edges: [
        { from: 'root', to: 'a' },
        { from: 'root', to: 'b' },
        { from: 'b', to: 'c1' },
        { from: 'a', to: 'c2' },
      ],
    };
    const [a, b, c1, c2] = xs(g, ['a', 'b', 'c1', 'c2']);
    expect(Math.sign(a - b)).toBe(Math.sign(c2 - c1));
  });
});
