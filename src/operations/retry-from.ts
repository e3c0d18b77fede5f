/**
 * "Retry from here": a failed workflow runs one node again and everything that follows it — the
 * peer's `retry --restart-successful --node-field-selector id=<node>`, whose reset takes the
 * matched node and all its descendants. Which nodes follow a node in plugflow's status:
 *
 *   - what it contains and what depends on it: its `children`, transitively (a DAG task is a
 *     child of each task it depends on, so a task's dependents are among them);
 *   - in a steps template, the later step groups of the Steps node it is a step of (plugflow
 *     links a Steps node to all its groups, not each group to the next);
 *   - and the same for every node that encloses it (its step group's step, the retry node
 *     around an attempt, the task that called its template…): once the enclosing step runs
 *     again, what followed that step must run again too.
 *
 * Nodes that ran before it — earlier step groups, the tasks it depends on, siblings in its group
 * — keep their results. The leaves among the followers that succeeded (or were skipped) are
 * marked to go like the failed ones, then src/engine/retry-workflow.ts plans the retry as usual
 * (pods deleted, the groups above set back to Running, exit handlers run again). Pure.
 */
import type { NodeStatus, WorkflowStatus } from '../api/index.js';
import { OperationRefused } from './errors.js';

const GROUPS = new Set(['Steps', 'StepGroup', 'DAG', 'TaskGroup', 'Retry']);

/** `id=<node id>`, the peer UI's selector for one node; undefined for any other selector. */
export function nodeIdSelector(selector: string | undefined): string | undefined {
  const m = selector ? /^id=(.+)$/.exec(selector) : null;
  return m ? m[1] : undefined;
}

/** True when `child` is inside `node` (a step group, an attempt, an item, a hook, a task of its DAG). */
function contains(node: NodeStatus, child: NodeStatus): boolean {
  return child.boundaryID === node.id || ['(', '[', '.'].some((c) => child.name.startsWith(node.name + c));
}

function groupIndex(n: NodeStatus): number {
  const m = /\[(\d+)\]$/.exec(n.name);
  return m ? Number(m[1]) : -1;
}

/** The ids of `id` and every node that follows it (see the top of the file). */
export function nodesFrom(nodes: Record<string, NodeStatus>, id: string): Set<string> {
  const parents = new Map<string, NodeStatus[]>();
  for (const n of Object.values(nodes)) for (const c of n.children ?? []) parents.set(c, [...(parents.get(c) ?? []), n]);
  const out = new Set<string>();
  const closure = (start: string) => {
    const queue = [start];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (out.has(next) || !nodes[next]) continue;
      out.add(next);
      queue.push(...(nodes[next].children ?? []));
    }
  };
  const containerOf = (n: NodeStatus): NodeStatus | undefined =>
    (parents.get(n.id) ?? []).find((p) => contains(p, n)) ?? (n.boundaryID ? nodes[n.boundaryID] : undefined);
  closure(id);
  for (let cur: NodeStatus | undefined = nodes[id]; cur; cur = containerOf(cur)) {
    // Its dependents (DAG), which an enclosing node's own closure would not reach.
    if (cur.id !== id) for (const c of cur.children ?? []) if (!contains(cur, nodes[c] ?? cur)) closure(c);
    // The later step groups of the steps template it is a step of.
    const group = containerOf(cur);
    if (group?.type !== 'StepGroup') continue;
    const steps = containerOf(group);
    for (const g of steps?.children ?? []) if (nodes[g]?.type === 'StepGroup' && groupIndex(nodes[g]) > groupIndex(group)) closure(g);
  }
  return out;
}

/**
 * The status with the followers of `id` that succeeded or were skipped marked Omitted, which
 * src/engine/retry-workflow.ts removes and runs again like a failed step. Refused when the
 * workflow has no node `id`.
 */
export function markFrom(subject: string, status: WorkflowStatus | undefined, id: string): WorkflowStatus | undefined {
  const nodes = status?.nodes ?? {};
  if (!nodes[id]) throw new OperationRefused('not-found', `${subject} has no node "${id}" to retry from`);
  const next = structuredClone(status!);
  for (const f of nodesFrom(nodes, id)) {
    const n = next.nodes![f]!;
    if (GROUPS.has(n.type) || n.type === 'Container' || n.name.endsWith('.onExit')) continue;
    if (n.phase === 'Succeeded' || n.phase === 'Skipped') n.phase = 'Omitted';
  }
  return next;
}
