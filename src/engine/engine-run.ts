/**
 * The state of one reconcile: the node table being rebuilt, the observations indexed for
 * lookup, the actions and the earliest requeue time collected so far.
 *
 * One EngineRun lives for one call of `reconcileWorkflow` and is thrown away; everything that must
 * survive goes into the node table, which becomes `status.nodes`.
 */
import type { ParameterConfigMaps } from './parameter-config-maps.js';
import type { Artifact, NodePhase, NodeStatus, NodeType, Inputs, TemplateRef } from '../api/index.js';
import { copyNode, exportsGlobals } from './node-copy.js';
import { isFailure, isFinal } from './node-phase.js';
import { artifactVariable, locationKey } from './artifacts.js';
import type {
  AgentObservation,
  EngineAction,
  MemoCacheObservation,
  MemoEntry,
  Observations,
  PodObservation,
  TaskObservation,
  ResourceObservation,
} from './contract.js';
import { displayNameOf, nodeIdFor } from './node-naming.js';
import { LockBook } from './synchronization.js';
import { DEFAULT_MAX_LOOP_ITEMS } from './sequence.js';
import type { TemplateResolver } from './template-resolver.js';
import type { Vars } from './variables.js';

/** Why the workflow stops starting new work: deadline, `spec.shutdown`, a failed validation. */
export interface Shutdown {
  message: string;
  /** Whether exit handlers still run (deadline and Stop: yes; Terminate: no). */
  runExitHandlers: boolean;
}

export interface NewNode {
  name: string;
  type: NodeType;
  phase?: NodePhase;
  message?: string;
  displayName?: string;
  boundaryID?: string;
  templateName?: string;
  templateRef?: TemplateRef;
  templateScope?: string;
  inputs?: Inputs;
}

export class EngineRun {
  readonly nodes: Record<string, NodeStatus>;
  readonly nowMs: number;
  readonly now: string;
  readonly pods = new Map<string, PodObservation>();
  readonly tasks = new Map<string, TaskObservation>();
  readonly resources = new Map<string, ResourceObservation>();
  readonly agent: AgentObservation | undefined;
  readonly pluginsEnabled: boolean;
  /** Plugins left out of the agent pod, by name, with the reason (Observations.excludedPlugins). */
  readonly excludedPlugins: Readonly<Record<string, string>>;
  /** Observations.memoCaches (memoize.ts). */
  readonly memoCaches: Readonly<Record<string, MemoCacheObservation>>;
  /** Some node is (or was) a ready daemon (daemons.ts): scope ends look for daemons to stop. */
  hasDaemons = false;
  /** Some node is a DAG: only then may a node have two parents (progress.ts counts them). */
  hasDagNode = false;
  /** Observations.parameterConfigMaps (parameter-config-maps.ts). */
  readonly parameterConfigMaps: ParameterConfigMaps;
  /** This workflow's own memoized results not yet seen in their cache, by `cache/key` (memoize.ts). */
  memoLocal: Map<string, MemoEntry> | undefined;
  readonly actions: EngineAction[] = [];
  /** Earliest time (ms) at which something is due: backoff end, suspend end, a deadline. */
  requeueAtMs: number | undefined;
  /** Pods started or running after this reconcile; compared with `spec.parallelism`. */
  activePods = 0;
  /** Set while the main tree is walked after a deadline or `spec.shutdown`: start nothing new. */
  shutdown: Shutdown | undefined;
  /** `spec.suspend: true`: start nothing new, but let running work finish. */
  paused = false;
  /** Workflow-wide variables (`workflow.*`), including global outputs as they appear; changed only through setGlobals. */
  readonly globals: Record<string, string>;
  /** How many times setGlobals changed `globals`. */
  globalsVersion = 0;
  /** Output parameters exported with `globalName`, in export order (becomes status.outputs). */
  readonly globalOutputs = new Map<string, string>();
  /** Output artifacts exported with `globalName` (status.outputs.artifacts). */
  readonly globalArtifacts = new Map<string, Artifact>();
  /** The (effective) workflow's `spec.podSpecPatch`, rendered per pod by executePod. */
  podSpecPatch: string | undefined;
  /** The (effective) workflow's `spec.serviceAccountName`: resource templates act with its rights unless theirs is set. */
  serviceAccountName: string | undefined;
  /** Template invocations being executed right now, outermost first (see MAX_TEMPLATE_DEPTH). */
  depth = 0;
  /** The workflow's namespace (lock keys and holders are namespaced). */
  namespace = '';
  /** Most items one loop may expand to (Observations.maxLoopItems). */
  readonly maxLoopItems: number;
  /** Synchronization locks held and waited for (synchronization.ts); reconcile.ts sets it up. */
  locks = new LockBook({}, () => false);

  constructor(
    readonly workflowName: string,
    previous: Record<string, NodeStatus> | undefined,
    observations: Observations,
    readonly templates: TemplateResolver,
    readonly parallelism: number | undefined,
    globals: Record<string, string>,
  ) {
    // The engine changes the nodes it is given in place, never the caller's: a node still running
    // is copied whole; a finished one, whose result never changes (node-lifecycle.ts), only at its
    // top level (its progress and children may still change; addChild copies the list it grows).
    // Copying finished nodes shallowly keeps a reconcile of a 100,000-node workflow in proportion
    // to what still runs rather than to everything that ran.
    this.nodes = {};
    const before = previous ?? {};
    for (const id in before) {
      const node = before[id]!;
      this.givenIds.push(id);
      // Shared, not copied: a finished node's result never changes (node-lifecycle.ts). What may
      // still change of one (its progress, a hook linked as a child) is written to a copy put in
      // its place (own), never to the caller's object.
      if (isFinal(node.phase)) {
        this.nodes[id] = node;
        if (node.phase === 'Succeeded' && node.outputs !== undefined && exportsGlobals(node)) this.exporters.push(node);
        else if (isFailure(node.phase)) this.failedIds.add(id);
      } else {
        this.nodes[id] = this.adopt(copyNode(node));
        this.openIds.add(id);
        this.touched.add(id);
      }
      if (node.daemoned === true) this.hasDaemons = true;
      if (node.type === 'DAG') this.hasDagNode = true;
    }
    this.nowMs = Date.parse(observations.now);
    if (Number.isNaN(this.nowMs)) throw new Error(`observations.now is not an ISO-8601 time: ${JSON.stringify(observations.now)}`);
    this.now = new Date(this.nowMs).toISOString();
    for (const p of observations.pods) this.pods.set(p.nodeId, p);
    for (const t of observations.tasks) this.tasks.set(t.nodeId, t);
    for (const r of observations.resources ?? []) this.resources.set(r.nodeId, r);
    this.agent = observations.agent;
    this.pluginsEnabled = observations.pluginsEnabled;
    this.excludedPlugins = observations.excludedPlugins ?? {};
    this.memoCaches = observations.memoCaches ?? {};
    this.parameterConfigMaps = observations.parameterConfigMaps ?? {};
    this.maxLoopItems = observations.maxLoopItems ?? DEFAULT_MAX_LOOP_ITEMS;
    this.globals = globals;
  }

  /**
   * Found while the nodes are copied in, so that the passes that need them do not walk all the
   * nodes again: the ids of the nodes not finished when the run began, and the Succeeded nodes
   * that export global outputs (a Succeeded node is not counted as failed: it exports or not).
   */
  readonly openIds = new Set<string>();
  readonly exporters: NodeStatus[] = [];
  /** The ids of the nodes that had ended Failed or Error when the run began. */
  readonly failedIds = new Set<string>();
  /**
   * Every id whose entry in `nodes` may not be the very object the run was given: copied in
   * unfinished, created, or copied to be changed (and updateProgress adds the ones it rewrites).
   * Any other entry is the caller's object, untouched (contract.ts NodeDelta).
   */
  readonly touched = new Set<string>();

  /**
   * Whether a node may have changed since the run began: it was unfinished then, or this run
   * created it. Any other node is finished and stays as it was (node-lifecycle.ts).
   */
  mayHaveChanged(id: string): boolean {
    return this.openIds.has(id) || this.createdIds.has(id);
  }

  /** Node ids by name, for this run: the same names are looked up many times per reconcile. */
  private readonly ids = new Map<string, { id: string; key: string }>();

  idOf(name: string): string {
    return this.keyed(name).id;
  }

  /**
   * What a node's id and pod name are hashed from: its name, or — when another node already holds
   * the id that name hashes to (a 32-bit hash: a loop of 100,000 items has a few such pairs) —
   * `name#1`, `name#2`, … in turn. Ids are given in the order nodes are created and kept in the
   * status, so every later reconcile (and a restarted controller) finds each node where it is.
   */
  hashKeyOf(name: string): string {
    return this.keyed(name).key;
  }

  private keyed(name: string): { id: string; key: string } {
    let found = this.ids.get(name);
    if (found === undefined) this.ids.set(name, (found = this.probe(name)));
    return found;
  }

  /** The id `name` hashes to, or the next free one after ids held by other names. */
  private probe(name: string): { id: string; key: string } {
    let key = name;
    let id = nodeIdFor(this.workflowName, key);
    for (let i = 1; this.nodes[id] !== undefined && this.nodes[id].name !== name; i++)
      id = nodeIdFor(this.workflowName, (key = `${name}#${i}`));
    return { id, key };
  }

  private producedKeys: Set<string> | undefined;

  /**
   * Whether `a` names an artifact some node of this workflow holds as an output (what its pod
   * uploaded or its plugin returned, or what a steps/DAG node passed on from those). Built once
   * per run, on the first steps/DAG node that passes an artifact on.
   */
  produced(a: Artifact): boolean {
    const key = locationKey(a);
    if (this.producedKeys?.has(key)) return true;
    // Built on first use, and again on a miss: a node may have got its outputs later in this run.
    this.producedKeys = new Set();
    for (const n of Object.values(this.nodes)) for (const o of n.outputs?.artifacts ?? []) this.producedKeys.add(locationKey(o));
    return this.producedKeys.has(key);
  }

  nodeByName(name: string): NodeStatus | undefined {
    const node = this.nodes[this.idOf(name)];
    if (node === undefined || node.name === name) return node;
    // Taken, since this name was looked up, by a node whose name hashes alike: look again.
    this.ids.delete(name);
    const again = this.nodes[this.idOf(name)];
    return again?.name === name ? again : undefined;
  }

  /** Creates a node (startedAt now, no children); the node must not exist yet. */
  createNode(spec: NewNode): NodeStatus {
    // The id looked up earlier may have been taken since by a node whose name hashes alike.
    const taken = this.nodes[this.idOf(spec.name)];
    if (taken !== undefined && taken.name !== spec.name) this.ids.delete(spec.name);
    const id = this.idOf(spec.name);
    const node: NodeStatus = {
      id,
      name: spec.name,
      displayName: spec.displayName ?? displayNameOf(spec.name, this.workflowName),
      type: spec.type,
      phase: spec.phase ?? 'Pending',
      startedAt: this.now,
    };
    if (spec.templateName !== undefined) node.templateName = spec.templateName;
    if (spec.templateRef !== undefined) node.templateRef = spec.templateRef;
    if (spec.templateScope !== undefined) node.templateScope = spec.templateScope;
    if (spec.boundaryID !== undefined) node.boundaryID = spec.boundaryID;
    // Kept for later reconciles, which render the template again from the node's inputs.
    if (spec.inputs !== undefined && ((spec.inputs.parameters?.length ?? 0) > 0 || (spec.inputs.artifacts?.length ?? 0) > 0))
      node.inputs = spec.inputs;
    if (spec.message !== undefined) node.message = spec.message;
    if (isFinal(node.phase)) node.finishedAt = this.now;
    if (this.nodes[id] === undefined) this.createdIds.add(id);
    if (node.type === 'DAG') this.hasDagNode = true;
    this.nodes[id] = this.adopt(node);
    this.touched.add(id);
    return node;
  }

  /** Sets phase and message; a final phase stamps finishedAt once. */
  setPhase(given: NodeStatus, phase: NodePhase, message?: string): NodeStatus {
    // Nothing to change (a finished group set Succeeded again) writes nothing: it may be shared.
    const same =
      given.phase === phase &&
      (message === undefined || (message === '' ? given.message === undefined : given.message === message)) &&
      (!isFinal(phase) || given.finishedAt !== undefined);
    if (same) return given;
    const node = this.own(given);
    node.phase = phase;
    if (message !== undefined) {
      if (message === '') delete node.message;
      else node.message = message;
    }
    if (isFinal(phase) && !node.finishedAt) node.finishedAt = this.now;
    return node;
  }

  /** Links `child` under `parent` once. */
  addChild(given: NodeStatus, child: NodeStatus): void {
    // A set per parent, so that a loop of N items links its children in O(N), not O(N²).
    // A node created in this run cannot be among the children the parent came with: only this
    // run's links are checked for it, so a loop's 100,000 earlier items are not put in a set.
    let known = this.childSets.get(given.id);
    if (known === undefined && !this.createdIds.has(child.id))
      this.childSets.set(given.id, (known = new Set(this.nodes[given.id]?.children ?? given.children)));
    if (known?.has(child.id) || this.linked.get(given.id)?.has(child.id)) return;
    // own() gives a node whose children list is this run's (copied from a shared node's).
    const parent = this.own(given);
    (parent.children ??= []).push(child.id);
    known?.add(child.id);
    let mine = this.linked.get(given.id);
    if (mine === undefined) this.linked.set(given.id, (mine = new Set()));
    mine.add(child.id);
  }

  /** The nodes this run made or copied: the ones it may change in place. */
  private readonly owned = new WeakSet<NodeStatus>();

  private adopt(node: NodeStatus): NodeStatus {
    this.owned.add(node);
    return node;
  }

  /**
   * `node` as this run may change it: itself when the run made or copied it, else (a finished
   * node shared with the caller) a copy that takes its place in `nodes`.
   */
  own(node: NodeStatus): NodeStatus {
    if (this.owned.has(node)) return node;
    const current = this.nodes[node.id];
    if (current !== undefined && current !== node && this.owned.has(current)) return current;
    const copy = this.adopt({ ...node, ...(node.children ? { children: [...node.children] } : {}) });
    this.nodes[node.id] = copy;
    this.touched.add(node.id);
    return copy;
  }

  /** The children of the parents linked to in this run (addChild), by parent id. */
  private readonly childSets = new Map<string, Set<string>>();
  /** The children each parent was linked to in this run. */
  private readonly linked = new Map<string, Set<string>>();
  /** Ids of the nodes created in this run that did not exist before it. */
  private readonly createdIds = new Set<string>();
  /** The ids of the nodes the run was given, in their order. */
  private readonly givenIds: string[] = [];

  /** Every id in `nodes`: those given, then those created (without enumerating a 100,000-key object). */
  *nodeIds(): Generator<string> {
    yield* this.givenIds;
    yield* this.createdIds;
  }

  children(node: NodeStatus): NodeStatus[] {
    return (node.children ?? []).map((id) => this.nodes[id]).filter((n): n is NodeStatus => n !== undefined);
  }

  emit(action: EngineAction): void {
    this.actions.push(action);
  }

  /** Asks for a reconcile at `atMs` unless an earlier one is already due. */
  requeueAt(atMs: number): void {
    if (this.requeueAtMs === undefined || atMs < this.requeueAtMs) this.requeueAtMs = atMs;
  }

  /** Publishes a `globalName` output: `{{workflow.outputs.parameters.<name>}}` and status.outputs. */
  exportGlobal(name: string, value: string): void {
    this.globalOutputs.set(name, value);
    this.setGlobals({ [`workflow.outputs.parameters.${name}`]: value });
  }

  /**
   * Changes workflow variables; `globalsVersion` counts the changes, so that what is built from
   * the globals (a DAG's live variables) is built again only after one.
   */
  setGlobals(vars: Readonly<Vars>): void {
    Object.assign(this.globals, vars);
    this.globalsVersion++;
  }

  /** Publishes a `globalName` output artifact: `{{workflow.outputs.artifacts.<name>}}` and status.outputs.artifacts. */
  exportGlobalArtifact(name: string, artifact: Artifact): void {
    const record: Artifact = { ...artifact, name };
    delete record.globalName;
    this.globalArtifacts.set(name, record);
    this.setGlobals({ [`workflow.outputs.artifacts.${name}`]: artifactVariable(record) });
  }

  /**
   * Runs `fn` as exit-handler work: a deadline or Stop does not stop exit handlers, so the
   * shutdown is lifted meanwhile (Terminate never gets here: its exit handlers do not start).
   */
  asExitHandler<T>(fn: () => T): T {
    const saved = this.shutdown;
    if (saved?.runExitHandlers) this.shutdown = undefined;
    try {
      return fn();
    } finally {
      this.shutdown = saved;
    }
  }

  /** Whether new nodes may start now (no shutdown, not paused). */
  canStart(): boolean {
    return this.shutdown === undefined && !this.paused;
  }

  /** Whether one more pod fits under `spec.parallelism`. */
  podCapacity(): boolean {
    return this.parallelism === undefined || this.activePods < this.parallelism;
  }
}
