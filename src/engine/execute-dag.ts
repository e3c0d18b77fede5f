/**
 * DAG templates: tasks run as soon as what they depend on allows it.
 *
 * Nodes: the DAG node (`wf`), one node per task (`wf.a`; a looped task is a TaskGroup `wf.a` whose
 * children are the items `wf.a(0:x)`…). Every task node has the DAG node as boundary. Links follow
 * the graph: the DAG node's children are the tasks without dependencies, and a task is a child of
 * each task it depends on.
 *
 * Rules:
 * - only the `target` tasks and what they need run (all tasks without a target);
 * - a task is considered once every task it names is done (finished, exit hook included); if its
 *   depends expression is false it is Omitted, otherwise it starts (`when` false → Skipped);
 * - a failure is *handled* when the task has `continueOn` for it or some task that depends on it
 *   ran; an unhandled failure fails the DAG, once nothing runs any more;
 * - `failFast` (default true): once a failure is known to be unhandled, no new task starts;
 *   running tasks finish (they are not killed). With `failFast: false` every branch that can run
 *   runs to the end;
 * - `parallelism` bounds the task (and loop item) nodes running at once.
 */
import type { DAGTask, NodeStatus } from '../api/index.js';
import type { DependencyState } from '../expr/index.js';
import type { EngineRun } from './engine-run.js';
import { isFailure, isFinal, isFulfilled } from './node-phase.js';
import { continuesOn, expandCalls, expandLazily, referenceOf } from './call-expansion.js';
import { startedItems } from './started-items.js';
import { buildDagGraph, parseTargets, tasksNeededFor, topologicalOrder } from './dag-graph.js';
import { compileTaskDepends } from './dag-depends.js';
import { advanceExitHook, advanceHooks } from './exit-hooks.js';
import { evaluateDepends, renderString, valueSource, type CompiledDepends } from './expressions.js';
import { callVariables, newNode, templateVariables, type Execution } from './invocation.js';
import { advanceLifecycleHooks } from './lifecycle-hooks.js';
import { taskName } from './node-naming.js';
import { collectOutputs } from './outputs.js';
import { advanceCall, startCall } from './run-call.js';
import { skippedOutputVariables } from './skipped-outputs.js';
import { loopVariables, nodeVariables, type Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

interface DagState {
  run: EngineRun;
  ex: Execution;
  dag: NodeStatus;
  vars: Vars;
  /** Task or loop-item nodes running now (for `parallelism`). */
  running: number;
  /** Tasks whose node and hooks are finished. */
  done: Set<string>;
  /** The first lifecycle hook of a task or item that ended in Error: it fails the DAG. */
  hookError?: NodeStatus;
  /** live(st), kept while the workflow's globals do not change; addVars grows it in place. */
  liveVars?: { vars: Vars; globalsVersion: number };
}

export function executeDag(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let dag = ex.existing;
  if (!dag) {
    if (!run.canStart()) return undefined;
    dag = run.createNode(newNode(ex.seed, 'DAG', { phase: 'Running' }));
  }
  const template = ex.resolved.template;
  const tasks = template.dag?.tasks ?? [];
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const st: DagState = { run, ex, dag, vars: templateVariables(run.globals, ex), running: 0, done: new Set() };
  let depends: Map<string, CompiledDepends | undefined>;
  let needed: Set<string>;
  let order: string[];
  try {
    depends = compileTaskDepends(tasks, ex.where);
    const graph = buildDagGraph(tasks.map((t) => ({ name: t.name, dependsOn: depends.get(t.name)?.names ?? [] })));
    const target = template.dag?.target ? renderString(template.dag.target, st.vars, `${ex.where}.dag.target`) : undefined;
    needed = tasksNeededFor(graph, parseTargets(target));
    order = topologicalOrder(graph).filter((t) => needed.has(t));
  } catch (err) {
    return run.setPhase(dag, 'Error', errorMessage(err));
  }
  const failFast = template.dag?.failFast !== false;
  // First advance every started task, so `running` and failures are current; then consider the
  // others in dependency order (a task that finishes at once can let its dependents start).
  const fresh: string[] = [];
  for (const name of order) {
    const node = run.nodeByName(taskName(dag.name, name));
    if (node) advanceTask(st, byName.get(name)!, node);
    else fresh.push(name);
  }
  const notStarted: string[] = [];
  for (const name of fresh) {
    const task = byName.get(name)!;
    const deps = depends.get(name);
    if (deps && deps.names.some((d) => needed.has(d) && !st.done.has(d))) {
      notStarted.push(name);
      continue;
    }
    let go: boolean;
    try {
      go = deps === undefined || evaluateDepends(deps, (d) => dependencyState(run, dag.name, byName.get(d)));
    } catch (err) {
      link(st, deps, createTaskNode(st, task, 'Error', errorMessage(err)));
      st.done.add(name);
      continue;
    }
    if (!go) {
      const omitted = createTaskNode(st, task, 'Omitted', `depends ${JSON.stringify(deps!.text)} evaluated false`);
      link(st, deps, omitted);
      addVars(st, finishedTaskVariables(st, task, omitted));
      st.done.add(name);
      continue;
    }
    const blocked =
      !run.canStart() ||
      (failFast && unhandledFailure(st, tasks, needed, depends, false) !== undefined) ||
      (template.parallelism !== undefined && st.running >= template.parallelism);
    if (blocked) {
      notStarted.push(name);
      continue;
    }
    const started = startTask(st, task);
    if (!started) {
      notStarted.push(name);
      continue;
    }
    link(st, deps, started);
    advanceTask(st, task, started);
  }
  if (st.running > 0) return run.setPhase(dag, 'Running');
  if (notStarted.length > 0 && !(failFast && unhandledFailure(st, tasks, needed, depends, false))) {
    if (!run.shutdown) return run.setPhase(dag, 'Running');
    return run.setPhase(dag, 'Failed', run.shutdown.message);
  }
  const failure = unhandledFailure(st, tasks, needed, depends, true) ?? st.hookError;
  if (failure) {
    const phase = failure.phase === 'Error' ? 'Error' : 'Failed';
    return run.setPhase(
      dag,
      phase,
      `task "${failure.displayName}" ${phase === 'Error' ? 'errored' : 'failed'}: ${failure.message ?? phase}`,
    );
  }
  const collected = collectOutputs(template.outputs, undefined, valueSource(live(st)), ex.where, (a) => run.produced(a));
  if (!collected.ok) return run.setPhase(dag, 'Error', collected.error);
  if (collected.outputs.parameters || collected.outputs.artifacts) dag.outputs = collected.outputs;
  return run.setPhase(dag, 'Succeeded', '');
}

/**
 * The DAG's variables plus the workflow globals as they are now (a task may just have exported
 * one). Read for every task, several times, and it grows with every finished task: it is built
 * again only after the globals changed, and addVars adds to it in place. Callers read it and
 * copy what they keep; none may change it.
 */
function live(st: DagState): Vars {
  const globalsVersion = st.run.globalsVersion;
  if (st.liveVars?.globalsVersion !== globalsVersion) st.liveVars = { vars: { ...st.vars, ...st.run.globals }, globalsVersion };
  return st.liveVars.vars;
}

/** Adds variables of finished tasks to the DAG's own (and to live(st): the globals still win). */
function addVars(st: DagState, vars: Vars): void {
  Object.assign(st.vars, vars);
  const cached = st.liveVars?.vars;
  if (cached) for (const [k, v] of Object.entries(vars)) if (!Object.hasOwn(st.run.globals, k)) cached[k] = v;
}

/** Starts a task: a single call, or a TaskGroup for a loop. Undefined when it cannot start yet. */
function startTask(st: DagState, task: DAGTask): NodeStatus | undefined {
  const base = taskName(st.dag.name, task.name);
  const where = `${st.ex.where}.dag.tasks[${task.name}]`;
  const expansion = expandCalls(task, base, live(st), where, callVariables('tasks', task.name), st.run.maxLoopItems);
  if (!expansion.ok) return createTaskNode(st, task, 'Error', expansion.error);
  if (!expansion.looped) return startCall(st.run, expansion.calls[0]!, st.dag.id, st.ex.resolved.scope);
  if (expansion.calls.length === 0) return createTaskNode(st, task, 'Skipped', 'the loop has no items');
  return st.run.createNode({ name: base, displayName: task.name, type: 'TaskGroup', phase: 'Running', boundaryID: st.dag.id });
}

/** Advances a started task (its items for a loop, its hooks) and records its variables when done. */
function advanceTask(st: DagState, task: DAGTask, node: NodeStatus): void {
  const { run } = st;
  const where = `${st.ex.where}.dag.tasks[${task.name}]`;
  let current = node;
  let itemNodes: NodeStatus[] | undefined;
  if (node.type === 'TaskGroup') {
    itemNodes = advanceItems(st, task, node, where);
  } else if (!isFinal(node.phase)) {
    const call = expandCalls(task, node.name, live(st), where, callVariables('tasks', task.name), st.run.maxLoopItems);
    if (call.ok && !call.looped) current = advanceCall(run, call.calls[0]!, node, st.dag.id, st.ex.resolved.scope);
  }
  if (itemNodes) {
    // A loop's lifecycle hooks ran per item (advanceItems); its exit hook runs once for the loop.
    if (!isFinal(current.phase)) return;
    const vars = loopVariables(`tasks.${task.name}`, itemNodes, current.phase, current.id);
    if (!advanceExitHook(run, task, current, { ...live(st), ...vars }, st.ex.resolved.scope, where)) {
      st.running++;
      return;
    }
    addVars(st, vars);
    st.done.add(task.name);
    return;
  }
  const vars = (): Vars =>
    isFinal(current.phase) ? finishedTaskVariables(st, task, current) : nodeVariables(`tasks.${task.name}`, current);
  const hooks = advanceHooks(run, task, current, () => ({ ...live(st), ...vars() }), st.ex.resolved.scope, where);
  if (hooks.errored) st.hookError ??= hooks.errored;
  if (!hooks.done) {
    st.running++;
    return;
  }
  addVars(st, vars());
  st.done.add(task.name);
}

/** The lifecycle hooks of one item of a looped task, with the item's own variables. */
function itemHooks(st: DagState, task: DAGTask, callVars: Vars, item: NodeStatus, where: string): { pending: boolean } {
  const owner = { name: item.name, displayName: item.displayName, node: item, boundaryID: st.dag.id };
  const vars = { ...live(st), ...callVars, ...nodeVariables(`tasks.${task.name}`, item) };
  const hooks = advanceLifecycleHooks(st.run, task.hooks, owner, vars, st.ex.resolved.scope, where);
  if (hooks.errored) st.hookError ??= hooks.errored;
  return hooks;
}

/** `tasks.<name>.…` of a finished single task, with a skipped or omitted task's declared output defaults. */
function finishedTaskVariables(st: DagState, task: DAGTask, node: NodeStatus): Vars {
  const prefix = `tasks.${task.name}`;
  const where = `${st.ex.where}.dag.tasks[${task.name}]`;
  return {
    ...nodeVariables(prefix, node),
    ...skippedOutputVariables(st.run, prefix, node, referenceOf(task, where), st.ex.resolved.scope),
  };
}

/** Runs the items of a looped task; ends the TaskGroup when all are done. Returns the item nodes. */
function advanceItems(st: DagState, task: DAGTask, group: NodeStatus, where: string): NodeStatus[] {
  const { run } = st;
  const expansion = expandLazily(task, group.name, live(st), where, callVariables('tasks', task.name), st.run.maxLoopItems);
  if (!expansion.ok) {
    if (!isFinal(group.phase)) run.setPhase(group, 'Error', expansion.error);
    return run.children(group);
  }
  const parallelism = st.ex.resolved.template.parallelism;
  let pending = 0;
  let failed: NodeStatus | undefined;
  const items: NodeStatus[] = [];
  // Without hooks, the started items are the group's first children (started-items.ts): those
  // finished are counted from their phase, without building their calls.
  const started = task.hooks ? undefined : startedItems(run, group, expansion, (n) => !continuesOn(task, n.phase), true);
  if (started) {
    const live = new Set(started.live);
    for (let i = 0; i < started.count; i++) {
      let node = run.nodes[group.children![i]!]!;
      if (live.has(i)) node = advanceCall(run, expansion.at(i), node, st.dag.id, st.ex.resolved.scope);
      items.push(node);
      if (!isFulfilled(node)) {
        st.running++;
        pending++;
      } else if (isFailure(node.phase) && !continuesOn(task, node.phase)) failed ??= node;
    }
  }
  for (let i = started?.count ?? 0; i < expansion.count; i++) {
    // Past the started items nothing more can start once the group ended or is at its parallelism.
    if (started && (isFinal(group.phase) || (parallelism !== undefined && st.running >= parallelism))) {
      pending += expansion.count - i;
      break;
    }
    const call = expansion.at(i);
    let node = run.nodeByName(call.name);
    if (node) node = advanceCall(run, call, node, st.dag.id, st.ex.resolved.scope);
    else if (!isFinal(group.phase) && (parallelism === undefined || st.running < parallelism)) {
      node = startCall(run, call, st.dag.id, st.ex.resolved.scope);
      if (node) run.addChild(group, node);
    }
    if (!node) {
      pending++;
      continue;
    }
    items.push(node);
    const hooks = task.hooks ? itemHooks(st, task, call.vars, node, where) : undefined;
    if (!isFulfilled(node) || hooks?.pending) {
      st.running++;
      pending++;
    } else if (isFailure(node.phase) && !continuesOn(task, node.phase)) failed ??= node;
  }
  if (isFinal(group.phase)) return items;
  if (pending > 0) {
    if (run.shutdown && st.running === 0) run.setPhase(group, 'Failed', run.shutdown.message);
    return items;
  }
  if (failed) {
    const phase = failed.phase === 'Error' ? 'Error' : 'Failed';
    run.setPhase(group, phase, `item "${failed.displayName}" ${phase === 'Error' ? 'errored' : 'failed'}: ${failed.message ?? phase}`);
  } else {
    run.setPhase(group, 'Succeeded', '');
  }
  return items;
}

function createTaskNode(st: DagState, task: DAGTask, phase: 'Error' | 'Omitted' | 'Skipped', message: string): NodeStatus {
  return st.run.createNode({
    name: taskName(st.dag.name, task.name),
    displayName: task.name,
    type: 'Skipped',
    phase,
    message,
    boundaryID: st.dag.id,
  });
}

/** Links a new task node under the DAG node (no dependencies) or under each dependency's node. */
function link(st: DagState, deps: CompiledDepends | undefined, node: NodeStatus): void {
  const parents = (deps?.names ?? [])
    .map((d) => st.run.nodeByName(taskName(st.dag.name, d)))
    .filter((n): n is NodeStatus => n !== undefined);
  if (parents.length === 0) st.run.addChild(st.dag, node);
  for (const p of parents) st.run.addChild(p, node);
}

/** What the depends language needs to know about a dependency: phase, item phases, continueOn. */
function dependencyState(run: EngineRun, dagName: string, task: DAGTask | undefined): DependencyState | undefined {
  if (!task) return undefined;
  const node = run.nodeByName(taskName(dagName, task.name));
  if (!node) return undefined;
  const state: DependencyState = { phase: node.phase };
  if (node.daemoned) state.daemoned = true;
  if (node.type === 'TaskGroup') state.children = run.children(node).map((c) => c.phase);
  if (task.continueOn) state.continueOn = task.continueOn;
  return state;
}

/**
 * The first failed task (in declaration order) whose failure nothing handles: no `continueOn`
 * for it, and no task that depends on it ran. While the DAG still runs (`final` false) a
 * dependent not yet considered might still handle it, so such a failure does not count yet; at
 * the end (`final` true) a dependent that was never considered did not run.
 */
function unhandledFailure(
  st: DagState,
  tasks: readonly DAGTask[],
  needed: ReadonlySet<string>,
  depends: ReadonlyMap<string, CompiledDepends | undefined>,
  final: boolean,
): NodeStatus | undefined {
  for (const t of tasks) {
    if (!needed.has(t.name) || !st.done.has(t.name)) continue;
    const node = st.run.nodeByName(taskName(st.dag.name, t.name));
    if (!node || !isFailure(node.phase) || continuesOn(t, node.phase)) continue;
    const dependents = tasks
      .filter((d) => needed.has(d.name) && depends.get(d.name)?.names.includes(t.name))
      .map((d) => st.run.nodeByName(taskName(st.dag.name, d.name)));
    if (dependents.some((dn) => dn !== undefined && dn.phase !== 'Omitted')) continue;
    if (!final && dependents.some((dn) => dn === undefined)) continue;
    return node;
  }
  return undefined;
}
