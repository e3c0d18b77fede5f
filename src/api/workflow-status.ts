/**
 * Workflow status and node status. The engine owns what goes in here and may add fields; the
 * REST server and CLI only read it. Required fields are those every node has from birth.
 */
import type { Inputs, Outputs } from './parameter.js';
import type { TemplateRef } from './template-calls.js';

export type NodePhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Error' | 'Skipped' | 'Omitted';

/** '' is a workflow the controller has not seen yet. */
export type WorkflowPhase = '' | 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Error';

/** `Container`: one container of a containerSet step, a child of its Pod node (no pod of its own). */
export type NodeType =
  'Pod' | 'Steps' | 'StepGroup' | 'DAG' | 'TaskGroup' | 'Retry' | 'Skipped' | 'Suspend' | 'Plugin' | 'HTTP' | 'Resource' | 'Container';

/** A Kubernetes object a resource template acted on. */
export interface ResourceObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface NodeStatus {
  id: string;
  name: string;
  displayName: string;
  type: NodeType;
  phase: NodePhase;
  templateName?: string;
  templateRef?: TemplateRef;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  inputs?: Inputs;
  outputs?: Outputs;
  children?: string[];
  /** Id of the steps/DAG node this node belongs to. */
  boundaryID?: string;
  /** `done/total`, e.g. `1/3`. */
  progress?: string;
  podName?: string;
  retryAttempt?: number;
  hostNodeName?: string;
  /**
   * A daemon step (`template.daemon`) whose container is ready: the node still runs (its pod
   * serves) but counts as done for its siblings and dependents, until its scope ends.
   */
  daemoned?: boolean;
  /** The pod's IP (daemon steps: `{{steps.X.ip}}` / `{{tasks.X.ip}}`). */
  podIP?: string;
  /**
   * The object a resource template's action created, applied, replaced, patched or read, stored
   * once the action is done: a restarted controller waits for its conditions instead of acting
   * again (a second `create` of a `generateName` manifest would make a second object).
   */
  resourceObject?: ResourceObjectRef;
  /**
   * Where `templateName` is looked up: unset for the workflow's own templates, otherwise
   * `WorkflowTemplate/<name>` or `ClusterWorkflowTemplate/<name>` (set by the engine).
   */
  templateScope?: string;
  /**
   * Set by the engine once the node's pod or agent task has been seen. A pod that was seen and
   * is gone while the node runs means the pod was deleted (the node ends in Error); one never seen
   * is simply created again (pod names are deterministic, so that is harmless).
   */
  observed?: boolean;
  /**
   * Set on the node of a memoized template (`template.memoize`): `hit` when its outputs came from
   * the cache `cacheName` under `key` and nothing ran; `hit: false` when it ran (and its outputs
   * are stored there once it succeeds).
   */
  memoizationStatus?: MemoizationStatus;
}

export interface MemoizationStatus {
  hit: boolean;
  key: string;
  cacheName: string;
}

export interface WorkflowCondition {
  type: string;
  status: string;
  message?: string;
}

/**
 * The workflow's agent pod, as far as the engine must remember it across controller restarts:
 * how many failed agent pods it replaced (bounded by MAX_AGENT_REPLACEMENTS in
 * src/engine/agent-replacement.ts) and the uid of the last one, so each failed pod counts once.
 */
export interface AgentStatus {
  replacements: number;
  replacedPodUID?: string;
}

export interface WorkflowStatus {
  phase?: WorkflowPhase;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  progress?: string;
  nodes?: Record<string, NodeStatus>;
  /**
   * `nodes` as stored when they are large: base64 of their gzipped JSON, as the peer stores them
   * (compressed-nodes.ts). Readers see `nodes`: every reader inflates.
   */
  compressedNodes?: string;
  /**
   * Set when the nodes are too many for the object: the version of the full node set in the
   * database (offloaded-nodes.ts); `nodes` then holds only the root and the running or failed
   * nodes. The peer's field name.
   */
  offloadNodeStatusVersion?: string;
  /** Global output parameters/artifacts. */
  outputs?: Outputs;
  conditions?: WorkflowCondition[];
  /** Set by the engine once it replaced a failed agent pod (plugin and http steps). */
  agent?: AgentStatus;
  /** Locks held and waited for (src/engine/synchronization.ts); the controller rebuilds its lock table from these. */
  synchronization?: SynchronizationStatus;
  /**
   * With several active controller replicas (`--sharding`): the identity of the replica that
   * wrote this status. A replica taking a workflow over records itself here in its first write.
   */
  controller?: string;
}

/**
 * The peer's shape: `holding` lists this workflow's holders of each lock; `waiting` lists each
 * lock it waits for with the lock's current holders. Lock keys are `<ns>/Mutex/<name>` and
 * `<ns>/ConfigMap/<configmap>/<key>`; holders are `<ns>/<workflow>` (workflow level) or
 * `<ns>/<workflow>/<node id>` (template level).
 */
export interface SynchronizationStatus {
  mutex?: { holding?: MutexHolding[]; waiting?: MutexHolding[] };
  semaphore?: { holding?: SemaphoreHolding[]; waiting?: SemaphoreHolding[] };
}

export interface MutexHolding {
  mutex: string;
  /** Holding: this workflow's holder. Waiting: the current holder ('' when none is known). */
  holder: string;
}

export interface SemaphoreHolding {
  semaphore: string;
  holders: string[];
}

/** Phases after which a node never changes. */
export const FINAL_NODE_PHASES: readonly NodePhase[] = ['Succeeded', 'Failed', 'Error', 'Skipped', 'Omitted'];

/** Phases after which a workflow never changes. */
export const FINAL_WORKFLOW_PHASES: readonly WorkflowPhase[] = ['Succeeded', 'Failed', 'Error'];
