/**
 * `progress` (`done/total`) of nodes and of the workflow, counted over the work nodes: pods,
 * agent tasks and resource actions. A task may report its own progress (`3/10`); otherwise a work node counts `1/1`
 * when Succeeded and `0/1` before. A composite node sums its distinct work descendants; a node
 * with none has no progress of its own.
 */
import type { NodeStatus } from '../api/index.js';

const WORK_TYPES = new Set(['Pod', 'Plugin', 'HTTP', 'Resource']);
const FORMAT = /^(\d+)\/(\d+)$/;

/**
 * Sets `progress` on every node and returns the workflow's progress: `0/0` when it has no work
 * (as the peer shows a workflow without pods), so the status always says how far it got.
 */
export function updateProgress(nodes: Record<string, NodeStatus>): string | undefined {
  const own = new Map<string, [number, number]>();
  for (const id in nodes) {
    const node = nodes[id]!;
    if (!WORK_TYPES.has(node.type)) continue;
    const reported = node.type !== 'Pod' && node.progress ? FORMAT.exec(node.progress) : null;
    const value: [number, number] = reported ? [Number(reported[1]), Number(reported[2])] : [node.phase === 'Succeeded' ? 1 : 0, 1];
    // A finished task is complete whatever it last reported.
    if (node.phase === 'Succeeded') value[0] = value[1];
    own.set(node.id, value);
  }
  for (const id in nodes) {
    const node = nodes[id]!;
    // A work node shows its own progress: its `children` are the tasks that depend on it (DAG
    // links), not parts of it. Writing a sum there would also be read back as "reported" by the
    // next reconcile and grow each time.
    const [done, total] = own.get(node.id) ?? sumWork(node, nodes, own);
    // Written only when it changed, to a copy (a finished node may be the caller's object).
    if (total > 0) {
      const progress = fraction(done, total);
      if (node.progress !== progress) nodes[id] = { ...node, progress };
    }
  }
  let done = 0;
  let total = 0;
  for (const [d, t] of own.values()) {
    done += d;
    total += t;
  }
  return `${done}/${total}`;
}

/** `done/total`, the two values most nodes of a large workflow have shared rather than built each time. */
function fraction(done: number, total: number): string {
  if (total === 1) return done === 1 ? '1/1' : '0/1';
  return `${done}/${total}`;
}

function sumWork(root: NodeStatus, nodes: Record<string, NodeStatus>, own: Map<string, [number, number]>): [number, number] {
  const seen = new Set<string>();
  const stack = [root.id];
  let done = 0;
  let total = 0;
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const w = own.get(id);
    if (w) {
      done += w[0];
      total += w[1];
    }
    for (const c of nodes[id]?.children ?? []) stack.push(c);
  }
  return [done, total];
}
