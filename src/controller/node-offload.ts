/**
 * The controller's side of offloaded node status (src/api/offloaded-nodes.ts, stored by
 * src/archive/node-status-store.ts): a workflow with more nodes than `aboveNodes` keeps them in
 * the database, and its object only the summary and the version.
 *
 * Writing (`plan`, then `save` before the object's status write): the nodes that changed since
 * the version the object holds go in as the next version; the status written names it. If that
 * status write fails, the object still names the version before, and the next write replaces the
 * rows of the version it never reached. Reading (`hydrate`): the version this controller wrote
 * last is still in memory, so a reconcile reads the database only after a restart or when
 * another controller wrote.
 */
import {
  hydratedStatus,
  moreNodesThan,
  nodeChanges,
  offloadedVersion,
  summaryNodes,
  type NodeChanges,
  type NodeDelta,
  type NodeStatus,
  type Workflow,
  type WorkflowStatus,
} from '../api/index.js';
import type { NodeStatusStore } from '../archive/node-status-store.js';

/** Default: workflows with more nodes than this keep them in the database (about 500 KB compressed in the object). */
export const DEFAULT_OFFLOAD_NODES_ABOVE = 10_000;

/** Compact a workflow's superseded rows every this many versions. */
const COMPACT_EVERY = 50;

export interface OffloadPlan {
  uid: string;
  namespace: string;
  version: number;
  /** The status to write to the object: summary nodes and the version. */
  stored: WorkflowStatus;
  /** The whole node set at `version`. */
  nodes: Record<string, NodeStatus>;
  /** What to write to the database; undefined when the nodes did not change. */
  changes?: NodeChanges;
}

export class NodeOffload {
  /** The node set of the version this controller last wrote or read, per workflow uid. */
  private readonly held = new Map<string, { version: number; nodes: Record<string, NodeStatus> }>();

  constructor(
    private readonly store: NodeStatusStore,
    readonly aboveNodes = DEFAULT_OFFLOAD_NODES_ABOVE,
  ) {}

  /** `wf` with its whole node set when it is offloaded (the same object otherwise). */
  async hydrate<T extends Workflow>(wf: T): Promise<T> {
    const version = offloadedVersion(wf.status);
    const uid = wf.metadata?.uid;
    if (version === undefined || !uid || !wf.status) return wf;
    const held = this.held.get(uid);
    const nodes = held?.version === version ? held.nodes : await this.store.load(uid, version);
    this.hold(uid, version, nodes, wf.status);
    return { ...wf, status: hydratedStatus(wf.status, nodes) };
  }

  /**
   * What to store for `status`, computed for `wf` (hydrated): undefined when the workflow keeps
   * its nodes in the object (not offloaded and not over `aboveNodes`). Pure: nothing is written.
   */
  plan(wf: Workflow, status: WorkflowStatus, delta?: NodeDelta): OffloadPlan | undefined {
    const held = offloadedVersion(wf.status);
    const nodes = status.nodes ?? {};
    if (held === undefined && !moreNodesThan(nodes, this.aboveNodes)) return undefined;
    // The engine's delta (when `status` is its run on `wf`) makes both walks follow what changed.
    const changes = nodeChanges(held === undefined ? undefined : wf.status?.nodes, nodes, delta);
    const same = held !== undefined && changes.removed.length === 0 && Object.keys(changes.changed).length === 0;
    const version = same ? held : (held ?? 0) + 1;
    const { nodes: _all, compressedNodes: _compressed, ...rest } = status;
    const stored: WorkflowStatus = {
      ...rest,
      nodes: summaryNodes(nodes, wf.metadata?.name ?? '', undefined, delta?.from === wf.status?.nodes ? delta : undefined),
      offloadNodeStatusVersion: String(version),
    };
    const where = { uid: wf.metadata?.uid ?? '', namespace: wf.metadata?.namespace ?? '' };
    return { ...where, version, stored, nodes, ...(same ? {} : { changes }) };
  }

  /** Writes the plan's changed nodes (before the object's status names the version). */
  async save(plan: OffloadPlan): Promise<void> {
    if (!plan.changes) return;
    await this.store.save(plan, plan.version, plan.changes.changed, plan.changes.removed);
    if (plan.version % COMPACT_EVERY === 0) await this.store.compact(plan.uid, plan.version - 1);
  }

  /** The workflow the status write returned, with the plan's whole node set. */
  attach<T extends Workflow>(written: T, plan: OffloadPlan): T {
    if (offloadedVersion(written.status) !== plan.version || !written.status) return written;
    this.hold(plan.uid, plan.version, plan.nodes, written.status);
    return { ...written, status: hydratedStatus(written.status, plan.nodes) };
  }

  /** Keeps a running workflow's nodes for its next reconcile; a finished one's are read again if ever needed. */
  private hold(uid: string, version: number, nodes: Record<string, NodeStatus>, status: WorkflowStatus): void {
    if (status.finishedAt !== undefined) this.held.delete(uid);
    else this.held.set(uid, { version, nodes });
  }

  /** Removes the nodes of workflows no longer in `live` (the controller's cache); returns how many. */
  async sweep(live: ReadonlySet<string>, namespaces: readonly string[] | undefined): Promise<number> {
    for (const uid of this.held.keys()) if (!live.has(uid)) this.held.delete(uid);
    return (await this.store.sweep(live, namespaces)).length;
  }
}
