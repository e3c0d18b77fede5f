/**
 * A tiny stand-in for the world around the engine, for tests: it keeps a workflow and its
 * status, applies the engine's actions the way the controller would (a created pod appears
 * Pending, a deleted pod disappears, tasks land in a TaskSet), and lets a test play the pods and
 * the agent: mark a pod Running, Succeeded with outputs, Failed, deleted; report a task result;
 * move the clock.
 *
 * It has no Kubernetes in it and decides nothing: every phase change comes from the test.
 */
import type { NodePhase, NodeStatus, Outputs, Template, Workflow, WorkflowSpec, WorkflowStatus } from '../api/index.js';
import type {
  AgentObservation,
  EngineAction,
  LockObservation,
  MemoCacheObservation,
  PodObservation,
  ReconcileResult,
  TaskObservation,
  ResourceObservation,
  TemplateSource,
} from './contract.js';
import { reconcileWorkflow } from './reconcile.js';

export interface WorldOptions {
  name?: string;
  start?: string;
  pluginsEnabled?: boolean;
  templates?: Record<string, TemplateSource>;
  /** Observations.parameterConfigMaps. */
  parameterConfigMaps?: Record<string, Record<string, string>>;
}

export class World {
  readonly workflow: Workflow;
  nowMs: number;
  pluginsEnabled: boolean;
  templates: Record<string, TemplateSource>;
  parameterConfigMaps: Record<string, Record<string, string>> | undefined;
  agent: AgentObservation | undefined;
  /** Observations.excludedPlugins: plugins the agent pod leaves out, name → reason. */
  excludedPlugins: Record<string, string> | undefined;
  /** Observations.workflowLevelPluginsEnabled (spec.executorPlugins allowed). */
  workflowLevelPluginsEnabled = false;
  readonly pods = new Map<string, PodObservation>();
  /** Every pod ever created, by name, with the template it was created from. */
  readonly created = new Map<string, { nodeId: string; template: Template }>();
  readonly deleted: string[] = [];
  /** The TaskSet: spec.tasks and status.nodes. */
  readonly taskSpecs = new Map<string, Template>();
  readonly taskResults = new Map<string, TaskObservation>();
  taskSetCompleted = false;
  /** What the resource runner reports, by node id; dropped when the node is no longer asked for, as the runner does. */
  readonly resourceResults = new Map<string, ResourceObservation>();
  /** The `runResource` actions of the last reconcile. */
  resourceAsked: Extract<EngineAction, { kind: 'runResource' }>[] = [];
  agentEnsured = false;
  /** Uids of the failed agent pods the engine asked to replace, in order. */
  readonly agentsReplaced: string[] = [];
  lastActions: EngineAction[] = [];
  /** Pods deleted by `gcPod` (spec.podGC), in order. */
  readonly collected: string[] = [];
  /** Set when the engine asked for the workflow to be deleted (spec.ttlStrategy). */
  workflowDeleted: string | undefined;
  /** volumeClaimTemplates entries whose claim exists (createPVC / deletePVC), and the PDB. */
  readonly claims = new Set<string>();
  pdb = false;
  requeueAt: string | undefined;
  /** Observations.memoCaches; `saveMemo` writes into an observed cache as the controller would. */
  memoCaches: Record<string, MemoCacheObservation> | undefined;
  /** Observations.locks, as the controller's lock table would give them (synchronization.ts). */
  locks: Record<string, LockObservation> | undefined;
  /** Observations.maxLoopItems (the controller's --max-loop-items); absent: the engine's default. */
  maxLoopItems: number | undefined;
  /** Every `saveMemo` applied, in order. */
  readonly memoSaves: { cacheName: string; key: string; nodeID: string }[] = [];

  constructor(spec: WorkflowSpec, options: WorldOptions = {}) {
    this.workflow = {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { name: options.name ?? 'wf', namespace: 'ns', uid: 'uid-1' },
      spec,
    };
    this.nowMs = Date.parse(options.start ?? '2024-01-01T00:00:00Z');
    this.pluginsEnabled = options.pluginsEnabled ?? true;
    this.templates = options.templates ?? {};
    this.parameterConfigMaps = options.parameterConfigMaps;
  }

  get status(): WorkflowStatus {
    return this.workflow.status ?? {};
  }

  /** Runs the engine once and applies its actions. */
  reconcile(): ReconcileResult {
    const given = deepFreeze(structuredClone(this.workflow));
    const result = reconcileWorkflow(given, {
      pods: [...this.pods.values()].map((p) => structuredClone(p)),
      tasks: [...this.taskResults.values()].map((t) => structuredClone(t)),
      resources: [...this.resourceResults.values()].map((r) => structuredClone(r)),
      templates: this.templates,
      ...(this.agent ? { agent: this.agent } : {}),
      ...(this.excludedPlugins ? { excludedPlugins: this.excludedPlugins } : {}),
      ...(this.memoCaches ? { memoCaches: structuredClone(this.memoCaches) } : {}),
      ...(this.locks ? { locks: structuredClone(this.locks) } : {}),
      ...(this.parameterConfigMaps ? { parameterConfigMaps: structuredClone(this.parameterConfigMaps) } : {}),
      now: new Date(this.nowMs).toISOString(),
      pluginsEnabled: this.pluginsEnabled,
      ...(this.workflowLevelPluginsEnabled ? { workflowLevelPluginsEnabled: true } : {}),
      ...(this.maxLoopItems !== undefined ? { maxLoopItems: this.maxLoopItems } : {}),
    });
    checkNodeDelta(given.status?.nodes, result);
    this.workflow.status = result.status;
    this.lastActions = result.actions;
    this.requeueAt = undefined;
    this.resourceAsked = [];
    for (const a of result.actions) this.apply(a);
    for (const id of [...this.resourceResults.keys()])
      if (!this.resourceAsked.some((a) => a.nodeId === id)) this.resourceResults.delete(id);
    return result;
  }

  advance(seconds: number): void {
    this.nowMs += seconds * 1000;
  }

  private apply(a: EngineAction): void {
    switch (a.kind) {
      case 'createPod':
        if (!this.pods.has(a.podName)) {
          this.pods.set(a.podName, { podName: a.podName, nodeId: a.nodeId, phase: 'Pending' });
          this.created.set(a.podName, { nodeId: a.nodeId, template: a.template });
        }
        break;
      case 'deletePod':
        if (this.pods.delete(a.podName)) this.deleted.push(a.podName);
        break;
      case 'writeTask':
        this.taskSpecs.set(a.nodeId, a.template);
        break;
      case 'runResource':
        this.resourceAsked.push(a);
        break;
      case 'removeTask':
        this.taskSpecs.delete(a.nodeId);
        this.taskResults.delete(a.nodeId);
        break;
      case 'ensureAgent':
        this.agentEnsured = true;
        break;
      case 'replaceAgent':
        this.agentsReplaced.push(a.podUID);
        break;
      case 'completeTaskSet':
        this.taskSetCompleted = true;
        break;
      case 'requeueAt':
        this.requeueAt = a.at;
        break;
      case 'gcPod':
        if (this.pods.delete(a.podName)) this.collected.push(a.podName);
        break;
      case 'deleteWorkflow':
        this.workflowDeleted = a.reason;
        break;
      case 'createPVC':
        this.claims.add(a.claim.metadata!.name!);
        break;
      case 'deletePVC':
        this.claims.delete(a.claimTemplate);
        break;
      case 'createPDB':
        this.pdb = true;
        break;
      case 'deletePDB':
        this.pdb = false;
        break;
      case 'setWorkflowMetadata':
        this.workflow.metadata.labels = { ...this.workflow.metadata.labels, ...a.labels };
        this.workflow.metadata.annotations = { ...this.workflow.metadata.annotations, ...a.annotations };
        break;
      case 'saveMemo': {
        const cache = this.memoCaches?.[a.cacheName];
        if (cache && 'entries' in cache) cache.entries[a.key] = structuredClone(a.entry);
        this.memoSaves.push({ cacheName: a.cacheName, key: a.key, nodeID: a.entry.nodeID });
        break;
      }
    }
  }

  /** All nodes whose display name (or full name) is `name`. */
  nodesNamed(name: string): NodeStatus[] {
    return Object.values(this.status.nodes ?? {}).filter((n) => n.displayName === name || n.name === name);
  }

  /** The one node called `name`; throws when there is none or more than one. */
  node(name: string): NodeStatus {
    const found = this.nodesNamed(name);
    if (found.length !== 1) {
      const all = Object.values(this.status.nodes ?? {}).map((n) => `${n.name} [${n.displayName}] ${n.phase}`);
      throw new Error(`expected one node named ${JSON.stringify(name)}, found ${found.length}; nodes:\n  ${all.join('\n  ')}`);
    }
    return found[0]!;
  }

  phaseOf(name: string): NodePhase | undefined {
    return this.nodesNamed(name)[0]?.phase;
  }

  /** The pod of node `name`; throws when it has none. */
  pod(name: string): PodObservation {
    const node = this.node(name);
    const pod = [...this.pods.values()].find((p) => p.nodeId === node.id);
    if (!pod) throw new Error(`node ${name} has no pod (pods: ${[...this.pods.keys()].join(', ')})`);
    return pod;
  }

  /** Display names of nodes whose pods currently exist and have not finished. */
  runningPods(): string[] {
    const byId = this.status.nodes ?? {};
    return [...this.pods.values()]
      .filter((p) => p.phase === 'Pending' || p.phase === 'Running')
      .map((p) => byId[p.nodeId]?.displayName ?? `?${p.podName}`)
      .sort();
  }

  startPod(name: string): void {
    this.pod(name).phase = 'Running';
  }

  succeedPod(name: string, outputs?: Outputs): void {
    const pod = this.pod(name);
    pod.phase = 'Succeeded';
    pod.outputs = { exitCode: '0', ...(outputs ?? {}) };
  }

  failPod(name: string, message = 'Error (exit code 1)', exitCode = '1'): void {
    const pod = this.pod(name);
    pod.phase = 'Failed';
    pod.message = message;
    pod.outputs = { exitCode };
  }

  /** The pod disappears (someone deleted it); the engine must notice. */
  removePod(name: string): void {
    const pod = this.pod(name);
    this.pods.delete(pod.podName);
  }

  /** The agent reports a result for the task of node `name`. */
  /** Reports what the resource runner saw for the resource node `name` (it must have been asked for). */
  reportResource(name: string, observation: Omit<ResourceObservation, 'nodeId'>): void {
    const node = this.node(name);
    if (!this.resourceAsked.some((a) => a.nodeId === node.id)) throw new Error(`node ${name} was not asked to run`);
    this.resourceResults.set(node.id, { nodeId: node.id, ...observation });
  }

  reportTask(name: string, phase: NodePhase, extra: { message?: string; outputs?: Outputs; progress?: string } = {}): void {
    const node = this.node(name);
    if (!this.taskSpecs.has(node.id)) throw new Error(`node ${name} has no task in the TaskSet`);
    this.taskResults.set(node.id, { nodeId: node.id, phase, ...extra });
  }

  /** Succeeds every pod that is Pending or Running (with optional outputs per display name). */
  succeedAll(outputs: Record<string, Outputs> = {}): void {
    const byId = this.status.nodes ?? {};
    for (const pod of this.pods.values()) {
      if (pod.phase !== 'Pending' && pod.phase !== 'Running') continue;
      pod.phase = 'Succeeded';
      pod.outputs = { exitCode: '0', ...(outputs[byId[pod.nodeId]?.displayName ?? ''] ?? {}) };
    }
  }
}

/** `value` frozen all the way down: the engine must never change what it is given. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Every engine test checks what the run says of its node table (ReconcileResult.nodeDelta): the
 * controller diffs and summarizes huge workflows by it, so an id it leaves out would never be
 * stored. Any id holding another object than it was given must be touched; none may be gone;
 * `failed` is exactly the given Failed/Error nodes.
 */
function checkNodeDelta(given: Record<string, NodeStatus> | undefined, result: ReconcileResult): void {
  const delta = result.nodeDelta;
  if (delta === undefined) return;
  if (delta.from !== given) throw new Error('nodeDelta.from is not the node table the run was given');
  const after = result.status.nodes ?? {};
  for (const id of Object.keys(given)) {
    if (!(id in after)) throw new Error(`nodeDelta: node ${id} is gone`);
    if (after[id] !== given[id] && !delta.touched.has(id)) throw new Error(`nodeDelta: node ${id} changed but is not touched`);
    const failed = given[id]!.phase === 'Failed' || given[id]!.phase === 'Error';
    if (failed !== delta.failed.has(id)) throw new Error(`nodeDelta: node ${id} (${given[id]!.phase}) is ${failed ? 'not ' : ''}in failed`);
  }
  for (const id of Object.keys(after))
    if (!(id in given) && !delta.touched.has(id)) throw new Error(`nodeDelta: new node ${id} is not touched`);
}
