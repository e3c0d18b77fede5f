/**
 * Positions for a Graph, from dagre (a maintained layered-graph layout): top to bottom, boxes for
 * nodes, dots for step/task groups. Pure apart from dagre; the view only draws what this returns.
 * Past LARGE_GRAPH nodes, layered-layout.ts instead: dagre's crossing minimization would take
 * seconds there.
 */
import dagre from '@dagrejs/dagre';
import { layeredLayout } from './layered-layout.js';
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

export function layout(graph: Graph): Laid {
  if (graph.nodes.length > LARGE_GRAPH) return layeredLayout(graph, size);
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'TB', nodesep: 16, ranksep: 36, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, size(n));
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const nodes = graph.nodes.map((n) => {
    const p = g.node(n.id);
    return { ...n, x: p.x, y: p.y, width: p.width, height: p.height };
  });
  const edges = graph.edges.map((e) => ({ ...e, points: g.edge(e.from, e.to).points ?? [] }));
  const box = g.graph();
  return { nodes, edges, width: box.width ?? 0, height: box.height ?? 0 };
}
