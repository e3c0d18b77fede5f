import { describe, expect, it } from 'vitest';
import { layout } from './layout.js';
import { buildGraph } from './workflow-graph.js';
import type { NodeStatus } from '../types.js';
import { MAX_ROW_WIDTH } from './wrap-rows.js';

/** A Steps node → one group of `n` items → a last step: the graph of a loop the user expanded. */
function loop(n: number): Record<string, NodeStatus> {
  const items = Array.from({ length: n }, (_, i) => `i${i}`);
  const all: NodeStatus[] = [
    { id: 'wf', name: 'wf', displayName: 'wf', type: 'Steps', phase: 'Succeeded', children: ['g0', 'g1'] },
    { id: 'g0', name: 'wf[0]', displayName: '[0]', type: 'StepGroup', phase: 'Succeeded', children: items },
    ...items.map((id): NodeStatus => ({ id, name: id, displayName: id, type: 'Pod', phase: 'Succeeded' })),
    { id: 'g1', name: 'wf[1]', displayName: '[1]', type: 'StepGroup', phase: 'Succeeded', children: ['last'] },
    { id: 'last', name: 'last', displayName: 'last', type: 'Pod', phase: 'Succeeded' },
  ];
  return Object.fromEntries(all.map((x) => [x.id, x]));
}

describe('wrapping wide ranks', () => {
  for (const n of [20, 1000]) {
    it(`keeps an expanded group of ${n} within a bounded width, every node apart and below its parents`, () => {
      const laid = layout(buildGraph(loop(n), { expanded: new Set(['g0']) }));
      expect(laid.nodes.filter((x) => x.id.startsWith('i'))).toHaveLength(n);
      expect(laid.width).toBeLessThanOrEqual(MAX_ROW_WIDTH + 32);
      const at = new Map(laid.nodes.map((x) => [x.id, x]));
      for (const e of laid.edges) expect(at.get(e.to)!.y, `${e.from} → ${e.to}`).toBeGreaterThan(at.get(e.from)!.y);
      for (const a of laid.nodes) {
        expect(a.x - a.width / 2).toBeGreaterThanOrEqual(0);
        expect(a.y + a.height / 2).toBeLessThanOrEqual(laid.height);
      }
      const boxes = laid.nodes.filter((x) => x.kind === 'node');
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < Math.min(boxes.length, i + 40); j++) {
          const [a, b] = [boxes[i], boxes[j]];
          const apart = Math.abs(a.x - b.x) >= (a.width + b.width) / 2 || Math.abs(a.y - b.y) >= (a.height + b.height) / 2;
          expect(apart, `${a.id} and ${b.id}`).toBe(true);
        }
    });
  }

  it('leaves a graph that fits alone', () => {
    const laid = layout(buildGraph(loop(5)));
    expect(new Set(laid.nodes.filter((x) => x.id.startsWith('i')).map((x) => x.y)).size).toBe(1);
  });
});
