/**
 * A linear-time layered layout for graphs too large for dagre to lay out at once. dagre (layout.ts)
 * minimizes crossings and balances positions, which is what a workflow of tens or hundreds of
 * nodes wants, but its cost grows much faster than the graph: a 1,000-node DAG takes ~5 s in
 * Chromium here. Past LARGE_GRAPH nodes this layout is used instead: ranks by longest path from
 * the roots, one barycenter pass to order each rank by its parents, ranks centred, straight
 * edges. O(nodes + edges) plus a sort per rank.
 */
import type { Graph } from './workflow-graph.js';
import type { Laid, Placed } from './layout.js';

export interface Box {
  width: number;
  height: number;
}

export function layeredLayout(graph: Graph, size: (n: Graph['nodes'][number]) => Box, gap = { node: 16, rank: 36, margin: 16 }): Laid {
  const index = new Map(graph.nodes.map((n, i) => [n.id, i]));
  const out: number[][] = graph.nodes.map(() => []);
  const inDegree = graph.nodes.map(() => 0);
  for (const e of graph.edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined) continue;
    out[a].push(b);
    inDegree[b]++;
  }
  // Longest path from the roots (Kahn's order); nodes on a cycle, if any, go after the rest.
  const rank = graph.nodes.map(() => 0);
  const queue = graph.nodes.map((_, i) => i).filter((i) => inDegree[i] === 0);
  const seen = new Set<number>();
  for (let q = 0; q < queue.length; q++) {
    const a = queue[q];
    seen.add(a);
    for (const b of out[a]) {
      rank[b] = Math.max(rank[b], rank[a] + 1);
      if (--inDegree[b] === 0) queue.push(b);
    }
  }
  let maxRank = Math.max(0, ...rank);
  for (let i = 0; i < graph.nodes.length; i++) if (!seen.has(i)) rank[i] = ++maxRank;

  // Order: first by when a node was reached, then once by the mean position of its parents.
  const ranks: number[][] = Array.from({ length: maxRank + 1 }, () => []);
  for (const i of [...queue, ...graph.nodes.map((_, i) => i).filter((i) => !seen.has(i))]) ranks[rank[i]].push(i);
  const position = new Map<number, number>();
  const parents: number[][] = graph.nodes.map(() => []);
  for (let a = 0; a < out.length; a++) for (const b of out[a]) parents[b].push(a);
  for (const r of ranks) {
    const key = new Map(
      r.map((i, k) => {
        const ps = parents[i].filter((p) => position.has(p));
        return [i, ps.length ? ps.reduce((s, p) => s + position.get(p)!, 0) / ps.length : k] as const;
      }),
    );
    r.sort((a, b) => key.get(a)! - key.get(b)!);
    r.forEach((i, k) => position.set(i, k));
  }

  const boxes = graph.nodes.map(size);
  const rankHeight = ranks.map((r) => Math.max(0, ...r.map((i) => boxes[i].height)));
  const rankWidth = ranks.map((r) => r.reduce((s, i) => s + boxes[i].width, 0) + gap.node * Math.max(0, r.length - 1));
  const width = Math.max(0, ...rankWidth) + 2 * gap.margin;
  const placed: Placed[] = new Array<Placed>(graph.nodes.length);
  let y = gap.margin;
  ranks.forEach((r, k) => {
    let x = gap.margin + (width - 2 * gap.margin - rankWidth[k]) / 2;
    for (const i of r) {
      const b = boxes[i];
      placed[i] = { ...graph.nodes[i], x: x + b.width / 2, y: y + rankHeight[k] / 2, width: b.width, height: b.height };
      x += b.width + gap.node;
    }
    y += rankHeight[k] + gap.rank;
  });
  const edges = graph.edges
    .filter((e) => index.has(e.from) && index.has(e.to))
    .map((e) => {
      const a = placed[index.get(e.from)!];
      const b = placed[index.get(e.to)!];
      return {
        ...e,
        points: [
          { x: a.x, y: a.y + a.height / 2 },
          { x: b.x, y: b.y - b.height / 2 },
        ],
      };
    });
  return { nodes: placed, edges, width, height: y - gap.rank + gap.margin };
}
