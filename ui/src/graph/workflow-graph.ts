/**
 * A workflow's nodes as a graph to draw: which boxes, which arrows, which groups are collapsed.
 * Pure (no DOM), so it is unit-tested and benchmarked on its own.
 *
 * Arrows follow the nodes' `children`, except inside a steps template: its groups (`[0]`, `[1]`…)
 * are all children of the Steps node, but run one after another, so the arrows go Steps → [0] →
 * each step of [0] → [1] → … . A node with more than `collapseOver` children (a loop of many
 * items, a wide fan-out) shows them as one box "N nodes" with counts by phase, unless the user
 * expanded it; what follows the group (the next step group, a DAG task that depends on all the
 * items) is still drawn, from the collapsed box.
 */
import type { NodeStatus, Phase } from '../types.js';

export interface GraphNode {
  id: string;
  label: string;
  phase: Phase;
  /** `node`: one workflow node; `group`: a step or task group (drawn as a dot); `collapsed`: hidden children of `of`. */
  kind: 'node' | 'group' | 'collapsed';
  type?: string;
  /** Collapsed box: the node whose children it stands for, and how many there are by phase. */
  of?: string;
  count?: number;
  phases?: Partial<Record<Phase, number>>;
}

export interface GraphEdge {
  from: string;
  to: string;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface GraphOptions {
  /** Nodes whose children are shown even when there are many. */
  expanded?: ReadonlySet<string>;
  /** More children than this collapse (default 12). */
  collapseOver?: number;
}

const GROUP_TYPES = new Set(['StepGroup', 'TaskGroup']);

/** Every arrow of the full graph, in a stable order. */
export function edgesOf(nodes: Record<string, NodeStatus>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (from: string, to: string) => {
    if (!nodes[to]) return;
    const list = out.get(from);
    if (list) {
      if (!list.includes(to)) list.push(to);
    } else out.set(from, [to]);
  };
  for (const n of Object.values(nodes)) {
    const children = n.children ?? [];
    if (n.type !== 'Steps') {
      for (const c of children) add(n.id, c);
      continue;
    }
    const groups = children.filter((c) => nodes[c]?.type === 'StepGroup').sort((a, b) => groupIndex(nodes[a]) - groupIndex(nodes[b]));
    for (const c of children) if (!groups.includes(c)) add(n.id, c);
    if (groups.length > 0) add(n.id, groups[0]);
    for (let i = 1; i < groups.length; i++) {
      const before = (nodes[groups[i - 1]].children ?? []).filter((c) => nodes[c]);
      if (before.length === 0) add(groups[i - 1], groups[i]);
      for (const s of before) add(s, groups[i]);
    }
  }
  return out;
}

function groupIndex(n: NodeStatus): number {
  const m = /\[(\d+)\]$/.exec(n.displayName || n.name);
  return m ? Number(m[1]) : 0;
}

/** The nodes no arrow points to (the workflow's own node, exit handlers, hooks). */
export function rootsOf(nodes: Record<string, NodeStatus>, edges: Map<string, string[]>): string[] {
  const pointed = new Set<string>();
  for (const targets of edges.values()) for (const t of targets) pointed.add(t);
  return Object.keys(nodes)
    .filter((id) => !pointed.has(id))
    .sort((a, b) => (nodes[a].startedAt ?? '').localeCompare(nodes[b].startedAt ?? '') || a.localeCompare(b));
}

export function buildGraph(nodes: Record<string, NodeStatus>, opts: GraphOptions = {}): Graph {
  const limit = opts.collapseOver ?? 12;
  const expanded = opts.expanded ?? new Set<string>();
  const edges = edgesOf(nodes);
  const out: Graph = { nodes: [], edges: [] };
  const shown = new Set<string>();
  const edgeKeys = new Set<string>();
  const edge = (from: string, to: string) => {
    const k = `${from}\u0000${to}`;
    if (from === to || edgeKeys.has(k)) return;
    edgeKeys.add(k);
    out.edges.push({ from, to });
  };
  const queue: string[] = [];
  const show = (id: string) => {
    if (shown.has(id)) return;
    shown.add(id);
    const n = nodes[id];
    out.nodes.push({ id, label: n.displayName || n.name, phase: n.phase, type: n.type, kind: GROUP_TYPES.has(n.type) ? 'group' : 'node' });
    queue.push(id);
  };
  for (const r of rootsOf(nodes, edges)) show(r);
  while (queue.length > 0) {
    const id = queue.shift()!;
    const targets = edges.get(id) ?? [];
    if (targets.length <= limit || expanded.has(id)) {
      for (const t of targets) {
        show(t);
        edge(id, t);
      }
      continue;
    }
    // Collapse: one box for the targets, arrows from it to what follows most of them.
    const box = `${id}/collapsed`;
    const phases: Partial<Record<Phase, number>> = {};
    for (const t of targets) phases[nodes[t].phase] = (phases[nodes[t].phase] ?? 0) + 1;
    out.nodes.push({
      id: box,
      label: `${targets.length} nodes`,
      phase: summaryPhase(phases),
      kind: 'collapsed',
      of: id,
      count: targets.length,
      phases,
    });
    edge(id, box);
    const hidden = new Set(targets);
    const inbound = new Map<string, number>();
    for (const t of targets) for (const next of edges.get(t) ?? []) if (!hidden.has(next)) inbound.set(next, (inbound.get(next) ?? 0) + 1);
    const need = Math.min(2, targets.length);
    for (const [next, n] of inbound) {
      if (n < need) continue;
      show(next);
      edge(box, next);
    }
  }
  return out;
}

/** The phase a collapsed box is coloured by: the worst of its nodes, else running, else done. */
export function summaryPhase(phases: Partial<Record<Phase, number>>): Phase {
  for (const p of ['Error', 'Failed', 'Running', 'Pending', 'Succeeded', 'Skipped', 'Omitted'] as Phase[]) if (phases[p]) return p;
  return '';
}
