/**
 * Finding nodes in the graph: a query matches a node whose name, display name, template or phase
 * contains it (any case). Matches come in the order the nodes started (then by name), so Enter
 * steps through them as the workflow ran. A match inside a collapsed group is shown by expanding
 * the groups above it (`groupsToExpand`). Pure: tested beside.
 */
import type { NodeStatus } from '../types.js';

export function searchNodes(nodes: Record<string, NodeStatus>, query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const hits = Object.values(nodes).filter((n) =>
    [n.name, n.displayName, n.templateName ?? '', n.phase ?? ''].some((f) => f.toLowerCase().includes(q)),
  );
  hits.sort((a, b) => (a.startedAt ?? '~').localeCompare(b.startedAt ?? '~') || a.name.localeCompare(b.name, undefined, { numeric: true }));
  return hits.map((n) => n.id);
}

/** The next match after `current` (the first when none), or the one before with `back`. */
export function step(matches: string[], current: string | undefined, back = false): string | undefined {
  if (matches.length === 0) return undefined;
  const i = current === undefined ? -1 : matches.indexOf(current);
  if (i < 0) return back ? matches[matches.length - 1] : matches[0];
  return matches[(i + (back ? -1 : 1) + matches.length) % matches.length];
}

/**
 * The nodes whose collapsed children hide `id`, outermost first: each must be expanded for `id`
 * to be drawn. `collapsed` are the nodes whose children are drawn as one box now.
 */
export function groupsToExpand(nodes: Record<string, NodeStatus>, id: string, collapsed: ReadonlySet<string>): string[] {
  const parents = new Map<string, string[]>();
  for (const n of Object.values(nodes)) for (const c of n.children ?? []) parents.set(c, [...(parents.get(c) ?? []), n.id]);
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (at: string) => {
    for (const p of parents.get(at) ?? []) {
      if (seen.has(p)) continue;
      seen.add(p);
      if (collapsed.has(p)) out.unshift(p);
      walk(p);
    }
  };
  walk(id);
  return out;
}
