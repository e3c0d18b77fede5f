/**
 * Positions for a Graph, from dagre (a maintained layered-graph layout): top to bottom, boxes for
 * nodes, dots for step/task groups. Pure apart from dagre; the view only draws what this returns.
 * Past LARGE_GRAPH nodes, layered-layout.ts instead: dagre's crossing minimization would take
 * seconds there. Either way, a rank wider than a screen or two is wrapped (wrap-rows.ts).
 */
import dagre from '@dagrejs/dagre';
import { layeredLayout } from './layered-layout.js';
import { wrapRows } from './wrap-rows.js';
import type { Graph, GraphNode } from './workflow-graph.js';

/** Above this many nodes dagre is too slow to wait for: a 200-node DAG of 10 per rank took 0.7 s in Node here. */
export const LARGE_GRAPH = 150;

export interface Placed extends GraphNode {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Laid {
  nodes: Placed[];
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
}

export const NODE_WIDTH = 168;
export const NODE_HEIGHT = 36;
const DOT = 14;

function size(n: GraphNode): { width: number; height: number } {
  if (n.kind === 'group') return { width: DOT, height: DOT };
  return { width: n.kind === 'collapsed' ? NODE_WIDTH + 24 : NODE_WIDTH, height: NODE_HEIGHT };
}

type CustomOrder = NonNullable<NonNullable<Parameters<typeof dagre.layout>[1]>['customOrder']>;
type DagreGraph = Parameters<CustomOrder>[0];

/**
 * dagre's order of the nodes in each rank, kept only when it has fewer crossing edges than
 * declaration order. dagre starts from declaration order (a depth-first walk) and then sweeps
 * the ranks to reduce crossings; among orders with as few crossings it keeps the last one
 * found, and its sweeps alternate which way ties go — so siblings with nothing to untangle
 * (a fan-out, one step group) came out right to left. layered-layout.ts keeps declaration order.
 */
const declarationOrderUnlessWorse: CustomOrder = (g, order) => {
  order(g, { disableOptimalOrderHeuristic: true });
  const declared = new Map(g.nodes().map((v) => [v, (g.node(v) as { order: number }).order] as const));
  const before = crossings(g);
  order(g, {});
  if (crossings(g) < before) return;
  for (const [v, o] of declared) (g.node(v) as { order: number }).order = o;
};

/** Edges crossing between adjacent ranks, with the ranks' current order (small graphs only: quadratic per rank). */
function crossings(g: DagreGraph): number {
  const at = (v: string) => g.node(v) as { rank: number; order: number };
  const byRank = new Map<number, [number, number][]>();
  for (const e of g.edges()) {
    const [a, b] = [at(e.v), at(e.w)];
    if (b.rank !== a.rank + 1) continue;
    const list = byRank.get(a.rank) ?? [];
    list.push([a.order, b.order]);
    byRank.set(a.rank, list);
  }
  let n = 0;
  for (const list of byRank.values())
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const [p, q] = [list[i], list[j]];
        if ((p[0] - q[0]) * (p[1] - q[1]) < 0) n++;
      }
  return n;
}

export function layout(graph: Graph): Laid {
  if (graph.nodes.length > LARGE_GRAPH) return wrapRows(layeredLayout(graph, size));
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 36, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, size(n));
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  dagre.layout(g, { customOrder: declarationOrderUnlessWorse });
  const nodes = graph.nodes.map((n) => {
    const p = g.node(n.id);
    return { ...n, x: p.x, y: p.y, width: p.width, height: p.height };
  });
  const edges = graph.edges.map((e) => ({ ...e, points: g.edge(e.from, e.to).points ?? [] }));
  const box = g.graph();
  return wrapRows({ nodes, edges, width: box.width ?? 0, height: box.height ?? 0 });
}
