/**
 * Renders a workflow's status as the tree people read a run by: one line per step with its
 * phase, template, pod, duration and message. Group nodes (StepGroup, TaskGroup) carry no
 * information of their own, so their children are shown in their place.
 */
import type { NodeStatus, WorkflowStatus } from '../api/index.js';

const SYMBOL: Record<string, string> = {
  Succeeded: '✔',
  Failed: '✖',
  Error: '⚠',
  Skipped: '○',
  Omitted: '○',
  Pending: '◷',
  Running: '●',
};

export interface TreeWorkflow {
  metadata: { name?: string; namespace?: string; creationTimestamp?: string | Date };
  status?: WorkflowStatus;
}

/** Human duration: `850ms`, `42s`, `3m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function duration(from?: string, to?: string, now = Date.now()): string {
  if (!from) return '';
  return formatDuration((to ? Date.parse(to) : now) - Date.parse(from));
}

/** The nodes to show under `node`: group nodes are replaced by their children. */
function visibleChildren(node: NodeStatus, nodes: Record<string, NodeStatus>): NodeStatus[] {
  const out: NodeStatus[] = [];
  for (const id of node.children ?? []) {
    const child = nodes[id];
    if (!child) continue;
    if (child.type === 'StepGroup' || child.type === 'TaskGroup') out.push(...visibleChildren(child, nodes));
    else out.push(child);
  }
  return out;
}

/** The top-level nodes: those nobody lists as a child (the entrypoint and exit handlers). */
function roots(nodes: Record<string, NodeStatus>): NodeStatus[] {
  const children = new Set(Object.values(nodes).flatMap((n) => n.children ?? []));
  return Object.values(nodes)
    .filter((n) => !children.has(n.id))
    .sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.name.localeCompare(b.name));
}

export function renderTree(wf: TreeWorkflow, now = Date.now()): string {
  const status = wf.status ?? {};
  const nodes = status.nodes ?? {};
  const header = [
    `Name:      ${wf.metadata.name ?? ''}`,
    `Namespace: ${wf.metadata.namespace ?? ''}`,
    `Status:    ${status.phase || 'Pending'}`,
    ...(status.message ? [`Message:   ${status.message}`] : []),
    ...(status.startedAt ? [`Duration:  ${duration(status.startedAt, status.finishedAt, now)}`] : []),
    ...(status.progress ? [`Progress:  ${status.progress}`] : []),
  ];
  const rows: string[][] = [['STEP', 'TEMPLATE', 'PODNAME', 'DURATION', 'MESSAGE']];
  const walk = (node: NodeStatus, prefix: string, last: boolean, top: boolean): void => {
    const branch = top ? '' : last ? '└─ ' : '├─ ';
    const label = `${prefix}${branch}${SYMBOL[node.phase] ?? '?'} ${top ? node.name : node.displayName}`;
    const message = [node.message, node.progress && node.type !== 'Pod' ? `(${node.progress})` : ''].filter(Boolean).join(' ');
    rows.push([label, node.templateName ?? '', node.podName ?? '', duration(node.startedAt, node.finishedAt, now), message]);
    const kids = visibleChildren(node, nodes);
    kids.forEach((k, i) => walk(k, top ? '' : prefix + (last ? '   ' : '│  '), i === kids.length - 1, false));
  };
  for (const r of roots(nodes)) walk(r, '', true, true);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => [...r[c]].length)));
  const table = rows.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell + ' '.repeat(widths[c] - [...cell].length)))
      .join('  ')
      .trimEnd(),
  );
  return [...header, '', ...(Object.keys(nodes).length ? table : ['(no steps yet)'])].join('\n');
}
