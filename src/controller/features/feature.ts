/**
 * The seam a controller feature plugs into: synchronization locks, pod lookups, memoize caches,
 * parameter ConfigMaps, resource runs, artifact GC, custom metrics and plugin exclusions are each one
 * module implementing the hooks it needs, and the Reconciler (reconciler.ts) calls every
 * registered feature at the same points of a reconcile, in registration order:
 *
 *   prepare   before the engine runs on an unfinished workflow: fetch what the caches lack
 *   observe   add the feature's part to the engine's Observations (the decisions stay in the engine)
 *   rerun     after an engine run, before the status is written: true runs the engine again
 *             (a lock granted now, a pod lookup that failed)
 *   finalizers  the finalizers the workflow must carry: added by the status write itself, so
 *             holding a workflow costs no write of its own
 *   stored    after the status is stored: act on it (settle locks, record metrics, add a finalizer)
 *   finished  after the actions of a workflow that ended: may ask to be looked at again
 *   deleting  the workflow is being deleted (held by finalizers): may ask to be looked at again
 *   forget    the workflow is gone: drop what the feature keeps for it
 *
 * A new feature is its module here, its part of the engine (src/engine) and one line in
 * controller.ts's feature list: the reconciler, the observations builder and the applier do not
 * change.
 */
import type { Workflow, WorkflowStatus } from '../../api/index.js';
import type { Observations, ReconcileResult } from '../../engine/index.js';
import type { KubeObject } from '../../kube/object-store.js';

export type Obj<T> = T & KubeObject;

/** One engine run as the reconciler keeps it. */
export interface ReconcileRun extends ReconcileResult {
  /**
   * The workflow the actions are applied for: its spec is the effective one (with
   * `workflowTemplateRef`, the WorkflowTemplate's spec with the workflow's fields over it).
   */
  effective: Obj<Workflow>;
  /** What the engine was given. */
  observations: Observations;
}

/** A status as stored, with the run it came from. */
export interface StoredRun {
  /** The workflow as written (its new resourceVersion). */
  workflow: Obj<Workflow>;
  run: ReconcileRun;
  /** The status the stored one replaced. */
  before: WorkflowStatus | undefined;
  /** The workflow has ended. */
  final: boolean;
}

/** When to reconcile the workflow again. */
export interface FeatureOutcome {
  /** At once (something the engine must see was learnt). */
  requeueNow?: boolean;
  /** At this time (ms since the epoch). */
  requeueAtMs?: number;
}

export interface WorkflowFeature {
  /** For logs and tests. */
  readonly name: string;
  prepare?(workflow: Obj<Workflow>): Promise<void>;
  observe?(workflow: Obj<Workflow>, observations: Observations, previous: ReconcileRun | undefined): void;
  rerun?(workflow: Obj<Workflow>, run: ReconcileRun): Promise<boolean>;
  finalizers?(workflow: Obj<Workflow>, run: ReconcileRun): readonly string[];
  stored?(stored: StoredRun): Promise<void> | void;
  finished?(stored: StoredRun, outcome: FeatureOutcome): Promise<FeatureOutcome | undefined>;
  deleting?(workflow: Obj<Workflow>, run: () => ReconcileRun): Promise<FeatureOutcome | undefined>;
  forget?(key: string): void;
}

/** Both outcomes at once: the earlier requeue time, and at once if either asks. */
export function mergeOutcomes(a: FeatureOutcome, b: FeatureOutcome | undefined): FeatureOutcome {
  if (!b) return a;
  const out: FeatureOutcome = { ...a };
  if (b.requeueNow) out.requeueNow = true;
  if (b.requeueAtMs !== undefined && (out.requeueAtMs === undefined || b.requeueAtMs < out.requeueAtMs)) out.requeueAtMs = b.requeueAtMs;
  return out;
}
