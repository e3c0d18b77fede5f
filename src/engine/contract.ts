/**
 * The contract between the pure engine and the parts at its edges (controller, pod builder,
 * pod observer, agent). The engine never talks to Kubernetes: the controller turns the world
 * into observations, calls the engine, and applies the actions it returns.
 *
 * Owned by src/engine; other modules import these types and must not redefine them.
 *
 * How the controller uses it (see README.md for the full loop):
 *   1. gather Observations (pods labelled with the workflow, the TaskSet status, the agent pod,
 *      the (Cluster)WorkflowTemplates the workflow refers to, the time, the plugin gate);
 *   2. `reconcileWorkflow(workflow, observations)` → `{ status, actions }`;
 *   3. persist `status` (status subresource), THEN apply `actions`. Every action is idempotent and
 *      is emitted again on the next reconcile while it is still needed, so a crash between the
 *      two steps loses nothing; applying actions before the status is stored could run a plugin
 *      task twice (a `removeTask` applied, then the status update lost).
 */
import type {
  Arguments,
  NodePhase,
  Outputs,
  PersistentVolumeClaimTemplate,
  ResourceObjectRef,
  Template,
  WorkflowSpec,
} from '../api/index.js';
import type { NodeDelta, WorkflowStatus } from '../api/index.js';

/** What the controller saw of one step pod (built by src/pods from a V1Pod). */
export interface PodObservation {
  podName: string;
  /** Node id from the pod's label; the engine matches pods to nodes by it. */
  nodeId: string;
  /**
   * Pending | Running | Succeeded | Failed, plus Deleted when the pod vanished under a running
   * node. (The engine also notices a pod that it saw before and that is no longer observed.)
   */
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Deleted';
  /** Human-readable reason for a failure (exit code, OOMKilled, deleted, ...). */
  message?: string;
  /**
   * Outputs reported by the pod's wait container: `result` (stdout of a script), `exitCode`, and
   * `parameters` read from each output parameter's `valueFrom.path` (by parameter name; a
   * parameter whose file was missing is left out and the engine applies its default).
   */
  outputs?: Outputs;
  startedAt?: string;
  finishedAt?: string;
  /** The pod's labels, for `spec.podGC.labelSelector` (workflow-gc.ts). */
  labels?: Record<string, string>;
  /** The Kubernetes node the pod was scheduled to (`spec.nodeName`), once it is. */
  hostNodeName?: string;
  /** The main container is ready (its readiness probe passes, or it runs and has none): daemons. */
  ready?: boolean;
  /** The pod's IP, once it has one (`{{steps.X.ip}}` of a daemon). */
  podIP?: string;
  /** A containerSet pod: each container of the set as the kubelet reports it, in the set's order. */
  containers?: ContainerObservation[];
  /**
   * The step's result is final but containers of the pod still run — a wait container waiting
   * for a main container that never started: the engine stops the pod like one of a finished node.
   */
  containersRunning?: boolean;
  /** Set when `outputs.result` holds only the beginning of the main container's stdout: its full size in bytes. */
  resultTruncatedFrom?: number;
}

/**
 * A resource template's manifest as its pod printed it: whole in `text`, or — when the pod's
 * report could hold only its beginning — that beginning, to be completed from the log of the
 * pod's main container and checked against `bytes`.
 */
export interface FetchedManifest {
  podName: string;
  /** The manifest's size in bytes. */
  bytes: number;
  text: string;
  whole: boolean;
}

/** One container of a containerSet pod. */
export interface ContainerObservation {
  name: string;
  /** Skipped: its command did not run (a dependency failed). */
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Skipped';
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}

/** What the agent reported for one plugin/http task (WorkflowTaskSet status.nodes[nodeId]). */
export interface TaskObservation {
  nodeId: string;
  phase: NodePhase;
  message?: string;
  outputs?: Outputs;
  progress?: string;
}

/**
 * What the controller's resource runner (src/controller/resource-runner.ts) reports for one
 * resource node: Running once started (with `object` once the action is done), then the end.
 */
export interface ResourceObservation {
  nodeId: string;
  phase: 'Running' | 'Succeeded' | 'Failed' | 'Error';
  message?: string;
  /** Output parameters read by `valueFrom.jsonPath`/`jqFilter` (by name), and `result`. */
  outputs?: Outputs;
  object?: ResourceObjectRef;
}

/** The workflow's agent pod, when the controller knows something about it. */
export interface AgentObservation {
  /**
   * Failed: the pod failed, was deleted, or cannot be created. Without `replacing`, every
   * unfinished task node ends in Error with the message.
   */
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  message?: string;
  /**
   * The failed pod is being replaced by the controller: only the tasks it had taken (reported)
   * end in Error — their result is lost and running them again could repeat a side effect, so
   * retryStrategy decides; tasks it never reported wait for the new agent pod.
   */
  replacing?: boolean;
  /** The pod seen, when there is one: the engine counts each failed pod once by its uid. */
  podName?: string;
  podUID?: string;
  /** The pod was deleted while it ran rather than failing by itself: replaced without counting. */
  deleted?: boolean;
}

/**
 * A WorkflowTemplate or ClusterWorkflowTemplate as the engine needs it. `spec` (when given) is
 * used for `spec.workflowTemplateRef`: the workflow runs the referenced spec with its own fields
 * laid over it.
 */
export interface TemplateSource {
  templates: Template[];
  entrypoint?: string;
  arguments?: Arguments;
  spec?: WorkflowSpec;
}

/** Key of a TemplateSource in Observations.templates: `WorkflowTemplate/<name>` or `ClusterWorkflowTemplate/<name>`. */
export type TemplateSourceKind = 'WorkflowTemplate' | 'ClusterWorkflowTemplate';

export function templateSourceKey(kind: TemplateSourceKind, name: string): string {
  return `${kind}/${name}`;
}

/**
 * Everything the engine needs besides the workflow itself.
 *
 * `pods` and `tasks` must be complete (from a synced cache): a pod the engine saw before and
 * that is missing now is taken as deleted, and its node ends in Error. When the controller cannot
 * see the world (cache not synced, list failed), it must not call the engine.
 * `templates` must hold every existing (Cluster)WorkflowTemplate the workflow refers to
 * (template-sources.ts resolves them);
 * the first reconcile fails the workflow when one is missing.
 */
export interface Observations {
  pods: PodObservation[];
  tasks: TaskObservation[];
  /** The resource nodes the controller is running or has finished (not yet recorded). */
  resources?: ResourceObservation[];
  /** Resolved templates of `templateRef` / `workflowTemplateRef`, keyed by `templateSourceKey`. */
  templates?: Record<string, TemplateSource>;
  /** The agent pod, if the workflow has one. */
  agent?: AgentObservation;
  /** Current time, ISO-8601. The engine never reads the clock itself. */
  now: string;
  /** Whether executor plugins are enabled in this controller. */
  pluginsEnabled: boolean;
  /**
   * Most items one loop (`withItems`, `withParam`, `withSequence`) may expand to: the
   * controller's `--max-loop-items`. Absent: DEFAULT_MAX_LOOP_ITEMS (100,000).
   */
  maxLoopItems?: number;
  /**
   * Whether workflows may declare their own plugins (spec.executorPlugins; the controller's
   * WORKFLOW_LEVEL_EXECUTOR_PLUGINS gate, independent of `pluginsEnabled`). Off: a workflow
   * declaring some is refused when it starts.
   */
  workflowLevelPluginsEnabled?: boolean;
  /**
   * The artifact driver plugins the controller runs (PLUGFLOW_ARTIFACT_DRIVERS), by name: a
   * workflow whose artifacts name another is refused when it starts. Absent: not checked.
   */
  artifactDrivers?: string[];
  /**
   * Plugins the workflow's agent pod leaves out (a container name or port clashes with another
   * plugin's), by plugin name, with the reason: a plugin step naming one fails with it.
   */
  excludedPlugins?: Record<string, string>;
  /**
   * The memoize caches the workflow's templates name (memoize.ts), by ConfigMap name, in the
   * workflow's namespace: every one named must be here (a missing ConfigMap is an empty cache).
   */
  memoCaches?: Record<string, MemoCacheObservation>;
  /**
   * The data of the parameter ConfigMaps (parameter-config-maps.ts) the workflow names in
   * `valueFrom.configMapKeyRef`, by name; one missing here was not found (or is not labelled).
   */
  parameterConfigMaps?: Record<string, Record<string, string>>;
  /**
   * The synchronization locks (synchronization.ts) by lock key, as the controller's lock table
   * holds them now: every lock the workflow's status holds or waits for, and every lock its spec
   * names literally. A lock that is missing here is not granted (the engine waits for it).
   */
  locks?: Record<string, LockObservation>;
}

/** One lock as the controller's lock table (src/controller/lock-table.ts) holds it. */
export interface LockObservation {
  /** The holders of this workflow (`<ns>/<wf>`, `<ns>/<wf>/<node id>`) the lock is granted to. */
  granted: string[];
  /** Every holder of the lock now, of any workflow: named in the waiting message and status. */
  holders: string[];
  /** How many may hold it (1 for a mutex; a semaphore's ConfigMap value), when known. */
  limit?: number;
  /** Why nobody can be granted the lock (a semaphore's ConfigMap or key missing, or not a number). */
  problem?: string;
}

/** The locks one holder holds or waits for (all of them are taken at once). */
export interface LockClaim {
  holder: string;
  locks: string[];
}

/** One cache entry, stored as JSON under its memoize key (the peer's layout). */
export interface MemoEntry {
  /** The node whose outputs these are. */
  nodeID: string;
  outputs: Outputs;
  /** When the node finished; `maxAge` counts from here. */
  creationTimestamp: string;
  lastHitTimestamp: string;
}

/** A cache as read: its entries, or why it cannot be used (named in the memoized node's error). */
export type MemoCacheObservation = { entries: Record<string, MemoEntry> } | { problem: string };

/** Something the controller must do in the world. Every action is idempotent. */
export type EngineAction =
  /**
   * Create the pod `podName` for node `nodeId` from the fully substituted `template` (inputs
   * resolved, no `{{…}}` left that the engine knows). AlreadyExists means it was done before.
   */
  | { kind: 'createPod'; nodeId: string; podName: string; template: Template; nodeName?: string; workflowPodSpecPatch?: string }
  /** Delete a pod that must stop (deadline, timeout, workflow ended). NotFound is fine. */
  | { kind: 'deletePod'; podName: string; reason: string; nodeId?: string }
  /**
   * Run (or keep running) the resource template of node `nodeId` with the rights of
   * `serviceAccountName` in the workflow's namespace; with `resume`, the action was done before
   * (a restarted controller): only wait for its conditions and read its outputs. Emitted on every
   * reconcile while the node runs; a node no longer asked for is stopped.
   */
  | {
      kind: 'runResource';
      nodeId: string;
      template: Template;
      serviceAccountName: string;
      where: string;
      resume?: ResourceObjectRef;
      /** With `manifestFrom.artifact`: the manifest as the node's pod fetched it (execute-resource.ts). */
      manifest?: FetchedManifest;
    }
  /** Set `spec.tasks[nodeId]` of the workflow's TaskSet to the resolved plugin/http template. */
  | { kind: 'writeTask'; nodeId: string; template: Template }
  /** Remove `spec.tasks[nodeId]` and `status.nodes[nodeId]`: the node's result has been copied. */
  | { kind: 'removeTask'; nodeId: string }
  /** Make sure the workflow's agent pod exists (it runs the TaskSet's tasks). */
  | { kind: 'ensureAgent' }
  /**
   * Delete the failed agent pod `podUID` (the `replacement`th replaced, counted in
   * status.agent), so that `ensureAgent` creates a new one once the name is free.
   */
  | { kind: 'replaceAgent'; podName: string; podUID: string; reason: string; replacement: number }
  /** Mark the TaskSet completed: the workflow is done, the agent stops. */
  | { kind: 'completeTaskSet' }
  /** Reconcile again at `at` (ISO-8601) even if nothing changes: backoff, suspend, deadlines. */
  | { kind: 'requeueAt'; at: string }
  /**
   * Delete the ended pod `podName` of a finished node because `spec.podGC` says so (workflow-gc.ts).
   * Separate from `deletePod` (which stops pods that must not run on): this one never touches a
   * running pod. NotFound is fine.
   */
  | { kind: 'gcPod'; podName: string; nodeId: string; reason: string }
  /** Delete the finished workflow itself: its `spec.ttlStrategy` time has passed. NotFound is fine. */
  | { kind: 'deleteWorkflow'; reason: string }
  /**
   * Create the PersistentVolumeClaim of `spec.volumeClaimTemplates` entry `claim` (named
   * `<workflow>-<claim name>`, owned by the workflow) before any step pod (workflow-resources.ts).
   * AlreadyExists is fine.
   */
  | { kind: 'createPVC'; claim: PersistentVolumeClaimTemplate }
  /** Delete the claim of the `volumeClaimTemplates` entry named `claimTemplate` (spec.volumeClaimGC). NotFound is fine. */
  | { kind: 'deletePVC'; claimTemplate: string; reason: string }
  /** Create the workflow's PodDisruptionBudget (named as the workflow, selecting its step pods). AlreadyExists is fine. */
  | { kind: 'createPDB'; spec: NonNullable<WorkflowSpec['podDisruptionBudget']> }
  /** Delete the workflow's PodDisruptionBudget: the workflow has ended. NotFound is fine. */
  | { kind: 'deletePDB' }
  /** Merge these labels and annotations into the workflow's metadata (spec.workflowMetadata). */
  | { kind: 'setWorkflowMetadata'; labels: Record<string, string>; annotations: Record<string, string> }
  /**
   * Store `entry` under `key` in the cache ConfigMap `cacheName` (created, labelled as a cache, if
   * missing) unless it holds a newer entry for the key; oldest entries make room (memoize.ts).
   */
  | { kind: 'saveMemo'; cacheName: string; key: string; entry: MemoEntry };

/** What `reconcileWorkflow` returns. */
export interface ReconcileResult {
  /** The new status; persist it as a whole. */
  status: WorkflowStatus;
  /** What to do in the world, in a stable order, after persisting the status. */
  actions: EngineAction[];
  /**
   * The spec the workflow runs (with `workflowTemplateRef`, the template's spec with the
   * workflow's fields over it), for the actions' pods; merged once per reconcile, here. Absent
   * when the engine did not walk the workflow (finished, or failed before it could run).
   */
  spec?: WorkflowSpec;
  /**
   * The synchronization locks this workflow's holders hold and wait for after this reconcile
   * (synchronization.ts). The controller's lock table takes them once the status is stored; absent
   * means none (a finished workflow holds nothing).
   */
  locks?: { holding: LockClaim[]; waiting: LockClaim[] };
  /**
   * Ids of finished nodes (or `(workflow)`) whose stored result this run would have changed and
   * the lifecycle rule put back (node-lifecycle.ts). Always absent unless the engine has a bug;
   * the controller reports it.
   */
  restored?: string[];
  /**
   * How `status.nodes` differs from the nodes the run was given, when the engine knows: lets the
   * controller diff and summarize a 100,000-node table by what changed (node-offload.ts).
   */
  nodeDelta?: NodeDelta;
}
