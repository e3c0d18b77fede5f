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
 * (as the peer shows a workflow without pods), so the status always says how far it got. A node
 * whose progress changed is replaced by a copy, its id added to `opts.rewritten`.
 *
 * When every node has at most one parent (steps, and DAGs without dependencies between tasks)
 * the sums are built bottom-up in one walk, each node visited once; otherwise each composite
 * node sums its distinct work descendants on its own (a task depended on by two others is still
 * counted once).
 */
export function updateProgress(nodes: Record<string, NodeStatus>, opts: ProgressOptions = {}): string | undefined {
  const all: Work = { done: 0, total: 0 };
  const ids = opts.ids ?? Object.keys(nodes);
  // Only a DAG links a node under two parents (a task under each task it depends on): without
  // one the nodes are a forest, and the parents need not be counted.
  let dag = opts.mayShare ?? false;
  if (opts.mayShare === undefined) for (const id of ids) if (nodes[id]!.type === 'DAG') dag = true;
  let shared = false;
  if (dag) {
    const hasParent = new Set<string>();
    for (const id of ids) {
      for (const c of nodes[id]!.children ?? []) {
        if (hasParent.has(c)) shared = true;
        else hasParent.add(c);
      }
    }
  }
  const sums = new Map<string, Work>();
  const one: Work = { done: 0, total: 0 };
  for (const id of ids) {
    const node = nodes[id]!;
    // A work node shows its own progress: its `children` are the tasks that depend on it (DAG
    // links), not parts of it. Writing a sum there would also be read back as "reported" by the
    // next reconcile and grow each time.
    let w: Work;
    if (WORK_TYPES.has(node.type)) {
      // Most nodes of a large workflow: a finished pod, its progress already written.
      if (node.progress === '1/1' && node.phase === 'Succeeded' && node.type === 'Pod') {
        all.done++;
        all.total++;
        continue;
      }
      one.done = 0;
      one.total = 0;
      addOwn(node, one);
      all.done += one.done;
      all.total += one.total;
      w = one;
    } else if (node.children === undefined || node.children.length === 0)
      continue; // no work under it
    else w = shared ? sumWork(node, nodes) : treeSum(node, nodes, sums);
    // Written only when it changed, to a copy (a finished node may be the caller's object).
    if (w.total > 0) {
      const progress = fraction(w.done, w.total);
      if (node.progress !== progress) {
        nodes[id] = { ...node, progress };
        opts.rewritten?.add(id);
      }
    }
  }
  return `${all.done}/${all.total}`;
}

export interface ProgressOptions {
  /** Gets the id of every node whose progress changed (replaced by a copy). */
  rewritten?: Set<string>;
  /**
   * Whether a node may have two parents (dag-sharing.ts), when the caller knows: false sums the
   * nodes as a forest at once. Undefined: any DAG node may link a task under two parents.
   */
  mayShare?: boolean;
  /** Every id of `nodes`, when the caller has them listed (a 100,000-key object is slow to enumerate). */
  ids?: Iterable<string>;
}

interface Work {
  done: number;
  total: number;
}

/** Adds a work node's own `done/total` to `into` (a composite node has none). */
function addOwn(node: NodeStatus, into: Work): void {
  if (!WORK_TYPES.has(node.type)) return;
  const reported = node.type !== 'Pod' && node.progress ? FORMAT.exec(node.progress) : null;
  const total = reported ? Number(reported[2]) : 1;
  // A finished task is complete whatever it last reported.
  into.done += node.phase === 'Succeeded' ? total : reported ? Number(reported[1]) : 0;
  into.total += total;
}

/**
 * The work under a node when every node has at most one parent (steps, DAGs without dependencies
 * between tasks): the sum of its children's, each node summed once however many ancestors ask.
 * Leaves (a loop's 100,000 items) are added in place, without an entry of their own.
 */
function treeSum(root: NodeStatus, nodes: Record<string, NodeStatus>, sums: Map<string, Work>): Work {
  const known = sums.get(root.id);
  if (known) return known;
  const w: Work = { done: 0, total: 0 };
  addOwn(root, w);
  // Marked before the children are summed: a cycle (never built by the engine) adds nothing twice.
  sums.set(root.id, w);
  for (const c of root.children ?? []) {
    const child = nodes[c];
    if (child === undefined) continue;
    if (child.children === undefined || child.children.length === 0) addOwn(child, w);
    else {
      const s = treeSum(child, nodes, sums);
      w.done += s.done;
      w.total += s.total;
    }
  }
  return w;
}

function sumWork(root: NodeStatus, nodes: Record<string, NodeStatus>): Work {
  const seen = new Set<string>();
  const stack = [root.id];
  const w: Work = { done: 0, total: 0 };
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const node = nodes[id];
    if (node === undefined) continue;
    addOwn(node, w);
    for (const c of node.children ?? []) stack.push(c);
  }
  return w;
}

/** `done/total`, the two values most nodes of a large workflow have shared rather than built each time. */
function fraction(done: number, total: number): string {
  if (total === 1) return done === 1 ? '1/1' : '0/1';
  return `${done}/${total}`;
}
