/**
 * Node status too large for its workflow object lives in the database (the peer's "offloaded node
 * status"; src/archive/node-status-store.ts). The object then says which version of the nodes it
 * goes with (`status.offloadNodeStatusVersion`) and keeps, in `status.nodes`, only what
 * `kubectl get -o yaml` users need: the workflow's root node and the nodes still running or
 * failed, at most OFFLOAD_SUMMARY_NODES of them. Readers that can reach the database replace
 * those with the whole set at that version (`hydratedStatus`).
 *
 * Pure: which nodes changed between two reconciles, the summary, and the bookkeeping of what a
 * hydrated status was stored as (so the controller diffs its next write against the object).
 */
import { jsonEqual } from './user-json.js';
import { FINAL_NODE_PHASES, type NodeStatus, type WorkflowStatus } from './workflow-status.js';

/**
 * What a run's node table kept of the one it was given (`from`): every id whose entry is not
 * the very object of `from` is in `touched` (created, changed, or copied and maybe unchanged);
 * no id of `from` is gone; and the nodes `from` held Failed or Error are `failed`. Valid only
 * for that `from` (compare by identity before use).
 */
export interface NodeDelta {
  from: Readonly<Record<string, NodeStatus>>;
  touched: ReadonlySet<string>;
  failed: ReadonlySet<string>;
}

/** Most nodes an offloaded status keeps in the object. */
export const OFFLOAD_SUMMARY_NODES = 200;

/** The version of the offloaded nodes a status goes with, or undefined when its nodes are in it. */
export function offloadedVersion(status: WorkflowStatus | undefined): number | undefined {
  const v = status?.offloadNodeStatusVersion;
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Whether `status` is offloaded and its nodes are not (yet) the whole set. */
export function needsHydration(status: WorkflowStatus | undefined): boolean {
  return offloadedVersion(status) !== undefined && !hydrated.has(status!);
}

/** What a hydrated status is stored as (the summary in the object), by the hydrated status. */
const hydrated = new WeakMap<WorkflowStatus, WorkflowStatus>();

/** `stored` (as in the object) with its whole node set; remembers what it was stored as. */
export function hydratedStatus(stored: WorkflowStatus, nodes: Record<string, NodeStatus>): WorkflowStatus {
  const status = { ...stored, nodes };
  hydrated.set(status, hydrated.get(stored) ?? stored);
  return status;
}

/** What a hydrated status is stored as, or undefined when it is not one. */
export function offloadedStoredForm(status: WorkflowStatus): WorkflowStatus | undefined {
  return hydrated.get(status);
}

/**
 * The nodes an offloaded object keeps: the root (its id is the workflow's name), then failed
 * ones, then those still running, up to `max`.
 */
export function summaryNodes(
  nodes: Record<string, NodeStatus>,
  rootId: string,
  max = OFFLOAD_SUMMARY_NODES,
  /** The run's delta, when `nodes` is its table: only its failed and touched ids can be failed or running. */
  delta?: NodeDelta,
): Record<string, NodeStatus> {
  const out: Record<string, NodeStatus> = {};
  let n = 0;
  const take = (node: NodeStatus | undefined): void => {
    if (!node || n >= max || out[node.id] !== undefined) return;
    // Links to nodes not kept would dangle: the summary lists nodes, not the graph.
    const { children: _children, ...rest } = node;
    out[node.id] = rest;
    n++;
  };
  take(nodes[rootId]);
  const running: NodeStatus[] = [];
  const consider = (node: NodeStatus | undefined): void => {
    if (node === undefined) return;
    if (node.phase === 'Failed' || node.phase === 'Error') take(node);
    else if (running.length < max && !FINAL_NODE_PHASES.includes(node.phase)) running.push(node);
  };
  if (delta) {
    // A node untouched by the run kept its phase: it is failed only if it was (`failed`), and
    // every unfinished node was copied in, so it is touched.
    for (const id of delta.failed) consider(nodes[id]);
    for (const id of delta.touched) if (!delta.failed.has(id)) consider(nodes[id]);
  } else for (const id in nodes) consider(nodes[id]);
  for (const node of running) take(node);
  return out;
}

export interface NodeChanges {
  /** Nodes added or changed, by id. */
  changed: Record<string, NodeStatus>;
  /** Ids no longer present. */
  removed: string[];
}

/**
 * What changed from `before` to `after`. A node whose top-level fields are the same values (or
 * the same objects) is unchanged without a deep look: the engine copies a finished node shallowly
 * (engine-run.ts), so in a large workflow almost every node is decided by that check.
 */
export function nodeChanges(
  before: Record<string, NodeStatus> | undefined,
  after: Record<string, NodeStatus>,
  /** The run's delta, when `after` is its table: only its touched ids are looked at. */
  delta?: NodeDelta,
): NodeChanges {
  if (before !== undefined && delta?.from === before) return touchedChanges(before, after, delta.touched);
  const changed: Record<string, NodeStatus> = {};
  let size = 0;
  let kept = 0;
  for (const id in after) {
    size++;
    const node = after[id]!;
    const old = before?.[id];
    if (old !== undefined) kept++;
    if (old === node || (old !== undefined && (sameFields(old, node) || jsonEqual(old, node)))) continue;
    changed[id] = node;
  }
  sizes.set(after, size);
  const removed: string[] = [];
  // When `before` was an `after` of an earlier call, its size tells whether any node went away
  // (a retry of the workflow removes some): usually none did, and its nodes need no second walk.
  if (before !== undefined && sizes.get(before) !== kept) for (const id in before) if (after[id] === undefined) removed.push(id);
  return { changed, removed };
}

/** nodeChanges when the run says which ids may differ: none was removed, the others are the same objects. */
function touchedChanges(before: Record<string, NodeStatus>, after: Record<string, NodeStatus>, touched: ReadonlySet<string>): NodeChanges {
  const changed: Record<string, NodeStatus> = {};
  let added = 0;
  for (const id of touched) {
    const node = after[id];
    if (node === undefined) continue;
    const old = before[id];
    if (old === undefined) added++;
    if (old === node || (old !== undefined && (sameFields(old, node) || jsonEqual(old, node)))) continue;
    changed[id] = node;
  }
  const size = sizes.get(before);
  if (size !== undefined) sizes.set(after, size + added);
  return { changed, removed: [] };
}

/** Sizes of the node sets nodeChanges walked (the next reconcile's `before` is this one's `after`). */
const sizes = new WeakMap<Record<string, NodeStatus>, number>();

/** Whether there are more than `limit` nodes, counted no further than that. */
export function moreNodesThan(nodes: Record<string, NodeStatus>, limit: number): boolean {
  let n = 0;
  for (const _id in nodes) if (++n > limit) return true;
  return false;
}

function sameFields(a: NodeStatus, b: NodeStatus): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  const ra = a as unknown as Record<string, unknown>;
  const rb = b as unknown as Record<string, unknown>;
  for (const k of ka) if (ra[k] !== rb[k]) return false;
  return true;
}
