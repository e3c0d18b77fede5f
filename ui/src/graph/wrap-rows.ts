/**
 * Rows no wider than a screen or two: a layered layout puts every node of a rank side by side, so
 * an expanded group of a thousand items was one row 184,016 px wide. A rank wider than
 * `maxWidth` is wrapped into lines (in its order, centred where the rank was), the ranks below
 * move down to make room, and the drawing is shifted back to its left margin. Edges to or from
 * a wrapped node are drawn straight; the others move with their ranks. Pure: tested beside.
 */
import type { Laid, Placed } from './layout.js';

export const MAX_ROW_WIDTH = 2200;

export function wrapRows(laid: Laid, maxWidth = MAX_ROW_WIDTH, gap = { node: 16, rank: 36, margin: 16 }): Laid {
  const rows = new Map<number, number[]>();
  laid.nodes.forEach((n, i) => {
    const y = Math.round(n.y);
    const row = rows.get(y);
    if (row) row.push(i);
    else rows.set(y, [i]);
  });
  const rowWidth = (row: number[]) => row.reduce((s, i) => s + laid.nodes[i].width, 0) + gap.node * (row.length - 1);
  if (![...rows.values()].some((r) => rowWidth(r) > maxWidth)) return laid;

  const nodes: Placed[] = laid.nodes.map((n) => ({ ...n }));
  const wrapped = new Set<number>();
  /** Rows that grew: [their y before, how much taller]. */
  const grown: [number, number][] = [];
  let down = 0;
  for (const y of [...rows.keys()].sort((a, b) => a - b)) {
    const row = rows.get(y)!.sort((a, b) => nodes[a].x - nodes[b].x);
    if (rowWidth(row) <= maxWidth) {
      for (const i of row) nodes[i].y += down;
      continue;
    }
    const left = Math.min(...row.map((i) => nodes[i].x - nodes[i].width / 2));
    const right = Math.max(...row.map((i) => nodes[i].x + nodes[i].width / 2));
    const centre = (left + right) / 2;
    const height = Math.max(...row.map((i) => nodes[i].height));
    const lines: number[][] = [[]];
    for (const i of row) {
      const line = lines[lines.length - 1];
      if (line.length > 0 && rowWidth([...line, i]) > maxWidth) lines.push([i]);
      else line.push(i);
    }
    lines.forEach((line, k) => {
      let x = centre - rowWidth(line) / 2;
      for (const i of line) {
        nodes[i].x = x + nodes[i].width / 2;
        nodes[i].y += down + k * (height + gap.rank);
        x += nodes[i].width + gap.node;
        wrapped.add(i);
      }
    });
    const extra = (lines.length - 1) * (height + gap.rank);
    grown.push([y, extra]);
    down += extra;
  }

  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const below = (y: number) => grown.reduce((s, [rowY, extra]) => (y > rowY + 0.5 ? s + extra : s), 0);
  let edges = laid.edges.map((e) => {
    const [a, b] = [index.get(e.from)!, index.get(e.to)!];
    if (wrapped.has(a) || wrapped.has(b)) {
      const [p, q] = [nodes[a], nodes[b]];
      return {
        ...e,
        points: [
          { x: p.x, y: p.y + p.height / 2 },
          { x: q.x, y: q.y - q.height / 2 },
        ],
      };
    }
    return { ...e, points: e.points.map((p) => ({ x: p.x, y: p.y + below(p.y) })) };
  });

  // Back to the left margin: the rank that was widest is no longer.
  const xs = [...nodes.map((n) => n.x - n.width / 2), ...edges.flatMap((e) => e.points.map((p) => p.x))];
  const shift = gap.margin - Math.min(...xs);
  for (const n of nodes) n.x += shift;
  edges = edges.map((e) => ({ ...e, points: e.points.map((p) => ({ x: p.x + shift, y: p.y })) }));
  const width = Math.max(...nodes.map((n) => n.x + n.width / 2), ...edges.flatMap((e) => e.points.map((p) => p.x))) + gap.margin;
  return { nodes, edges, width, height: laid.height + down };
}
