/**
 * Steps templates: groups run one after another; the steps of a group run in parallel.
 *
 * Nodes: the Steps node (`wf`) has one StepGroup child per started group (`wf[0]`, `wf[1]`, …);
 * each group's children are its steps (`wf[0].a`, or `wf[0].a(0:x)`… for a loop). Every step node
 * has the Steps node as its boundary.
 *
 * A group is done when all its steps (and their hooks) are done. It fails when a step failed
 * or errored without a matching `continueOn`; then no later group starts and the Steps node fails
 * with the step's message. A step whose `when` is false is Skipped, which is not a failure; a loop
 * with no items is one Skipped node. `parallelism` on the template bounds how many steps run at
 * once; with `failFast: true` no further step of the group starts once one has failed. Later
 * groups see earlier steps' results as `{{steps.<name>.…}}`.
 */
import type { NodeStatus, WorkflowStep } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFailure, isFinal } from './node-phase.js';
import { continuesOn, expandLazily, type ExpandedCall } from './call-expansion.js';
import { startedItems } from './started-items.js';
import { advanceHooks } from './exit-hooks.js';
import { valueSource } from './expressions.js';
import { callVariables, newNode, templateVariables, type Execution } from './invocation.js';
import { stepGroupName, stepName } from './node-naming.js';
import { collectOutputs } from './outputs.js';
import { advanceCall, startCall } from './run-call.js';
import { skippedOutputVariables } from './skipped-outputs.js';
import { loopVariables, nodeVariables, type Vars } from './variables.js';

type GroupState = { state: 'waiting' } | { state: 'done'; vars: Vars } | { state: 'failed'; phase: 'Failed' | 'Error'; message: string };

export function executeSteps(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Steps', { phase: 'Running' }));
  }
  const template = ex.resolved.template;
  const vars = templateVariables(run.globals, ex);
  const groups = template.steps ?? [];
  for (let i = 0; i < groups.length; i++) {
    const result = executeGroup(run, node, ex, groups[i] ?? [], i, vars);
    if (result.state === 'waiting') {
      run.setPhase(node, 'Running');
      return node;
    }
    if (result.state === 'failed') return run.setPhase(node, result.phase, result.message);
    Object.assign(vars, result.vars);
  }
  const collected = collectOutputs(template.outputs, undefined, valueSource({ ...vars, ...run.globals }), ex.where, (a) => run.produced(a));
  if (!collected.ok) return run.setPhase(node, 'Error', collected.error);
  if (collected.outputs.parameters || collected.outputs.artifacts) node.outputs = collected.outputs;
  return run.setPhase(node, 'Succeeded', '');
}

interface Entry {
  step: WorkflowStep;
  looped: boolean;
  /** How many calls (items of a loop), and the i-th, built when asked (call-expansion.ts). */
  count: number;
  at(i: number): ExpandedCall;
  where: string;
}

const none: Pick<Entry, 'count' | 'at'> = {
  count: 0,
  at: () => {
    throw new Error('no calls');
  },
};

/** Every call of an entry (for the variables of a finished group). */
function callsOf(entry: Entry): ExpandedCall[] {
  return Array.from({ length: entry.count }, (_, i) => entry.at(i));
}

function executeGroup(run: EngineRun, stepsNode: NodeStatus, ex: Execution, steps: WorkflowStep[], index: number, vars: Vars): GroupState {
  const template = ex.resolved.template;
  const scope = ex.resolved.scope;
  const groupName = stepGroupName(stepsNode.name, index);
  let group = run.nodeByName(groupName);
  if (!group) {
    if (run.shutdown) return { state: 'failed', phase: 'Failed', message: run.shutdown.message };
    if (!run.canStart()) return { state: 'waiting' };
    group = run.createNode({ name: groupName, type: 'StepGroup', phase: 'Running', boundaryID: stepsNode.id, displayName: `[${index}]` });
    run.addChild(stepsNode, group);
  }
  let failed: NodeStatus | undefined;
  const entries: Entry[] = [];
  for (const step of steps) {
    const base = stepName(groupName, step.name ?? '');
    const where = `${ex.where}.steps[${index}][${step.name ?? ''}]`;
    const expansion = expandLazily(step, base, { ...vars, ...run.globals }, where, callVariables('steps', step.name), run.maxLoopItems);
    if (!expansion.ok || (expansion.looped && expansion.count === 0)) {
      // A loop that cannot expand is an Error; an empty loop is Skipped. Either way one node.
      const node =
        run.nodeByName(base) ??
        run.createNode({
          name: base,
          displayName: step.name ?? base,
          type: 'Skipped',
          boundaryID: stepsNode.id,
          ...(expansion.ok ? { phase: 'Skipped', message: 'the loop has no items' } : { phase: 'Error', message: expansion.error }),
        });
      run.addChild(group, node);
      if (isFailure(node.phase) && !continuesOn(step, node.phase)) failed ??= node;
      entries.push({ step, looped: true, ...none, where });
      continue;
    }
    entries.push({ step, looped: expansion.looped, count: expansion.count, at: expansion.at, where });
  }

  let running = 0;
  const settle = (entry: Entry, call: ExpandedCall, node: NodeStatus): void => {
    if (isFinal(node.phase) && isFailure(node.phase) && !continuesOn(entry.step, node.phase)) failed ??= node;
    const hookVars = () => ({ ...call.vars, ...nodeVariables(`steps.${entry.step.name}`, node) });
    const hooks = advanceHooks(run, entry.step, node, hookVars, scope, entry.where);
    // A lifecycle hook in Error fails the group whatever continueOn says (lifecycle-hooks.ts).
    if (hooks.errored) failed ??= hooks.errored;
    if (!hooks.done) running++;
  };
  // First advance what already runs, so capacity and failures are current; then start the rest.
  const notStarted: Array<{ entry: Entry; call: ExpandedCall }> = [];
  // Items after the started ones of a lone loop: built only as they start (below).
  let tail: { entry: Entry; from: number } | undefined;
  let allStarted: string[] | undefined;
  for (const entry of entries) {
    // A lone loop without hooks: its started items are the group's children, in order, so those
    // already finished cost a look at their phase, not a call built and looked up by name.
    const started =
      entries.length === 1 && entry.looped && !entry.step.hooks && entry.step.onExit === undefined
        ? startedItems(run, group, entry, (n) => !continuesOn(entry.step, n.phase), false)
        : undefined;
    if (started?.failed) failed ??= started.failed;
    for (const i of started?.live ?? []) {
      const call = entry.at(i);
      settle(entry, call, advanceCall(run, call, run.nodes[group.children![i]!]!, stepsNode.id, scope));
    }
    if (started) {
      tail = { entry, from: started.count };
      if (started.count === entry.count) allStarted = group.children!.slice(0, started.count);
      continue;
    }
    for (let i = 0; i < entry.count; i++) {
      const call = entry.at(i);
      const existing = run.nodeByName(call.name);
      if (existing) settle(entry, call, advanceCall(run, call, existing, stepsNode.id, scope));
      else notStarted.push({ entry, call });
    }
  }
  let waitingToStart = notStarted.length + (tail ? tail.entry.count - tail.from : 0);
  const toStart = function* (): Generator<{ entry: Entry; call: ExpandedCall }> {
    yield* notStarted;
    for (let i = tail?.from ?? 0; tail && i < tail.entry.count; i++) yield { entry: tail.entry, call: tail.entry.at(i) };
  };
  for (const { entry, call } of toStart()) {
    if (template.failFast === true && failed) break;
    if (template.parallelism !== undefined && running >= template.parallelism) break;
    // An item of the tail is looked up only now, as it is about to start (it has no node unless
    // something linked it elsewhere).
    const existing = tail?.entry === entry ? run.nodeByName(call.name) : undefined;
    const node = existing ? advanceCall(run, call, existing, stepsNode.id, scope) : startCall(run, call, stepsNode.id, scope);
    if (!node) break;
    run.addChild(group, node);
    waitingToStart--;
    settle(entry, call, node);
  }
  if (running > 0) return { state: 'waiting' };
  if (waitingToStart > 0 && !(template.failFast === true && failed)) {
    if (!run.shutdown) return { state: 'waiting' };
    run.setPhase(group, 'Failed', run.shutdown.message);
    return { state: 'failed', phase: 'Failed', message: run.shutdown.message };
  }
  if (failed) {
    const phase = failed.phase === 'Error' ? 'Error' : 'Failed';
    const message = `step "${failed.displayName}" ${phase === 'Error' ? 'errored' : 'failed'}: ${failed.message ?? phase}`;
    run.setPhase(group, phase, message);
    return { state: 'failed', phase, message };
  }
  run.setPhase(group, 'Succeeded', '');
  return {
    state: 'done',
    vars: groupVariables(
      run,
      entries,
      group,
      scope,
      allStarted?.map((id) => run.nodes[id]!),
    ),
  };
}

/** `steps.<name>.…` of every step of a finished group (a skipped step's declared output defaults included). */
function groupVariables(
  run: EngineRun,
  entries: Entry[],
  group: NodeStatus,
  scope: string | undefined,
  /** A lone loop's item nodes, in item order, when every item had started (startedItems). */
  itemNodes?: NodeStatus[],
): Vars {
  const vars: Vars = {};
  for (const entry of entries) {
    const name = entry.step.name ?? '';
    if (entry.looped && itemNodes) {
      Object.assign(vars, loopVariables(`steps.${name}`, itemNodes, group.phase));
      continue;
    }
    const calls = callsOf(entry);
    const nodes = calls.map((c) => run.nodeByName(c.name)).filter((n): n is NodeStatus => n !== undefined);
    if (entry.looped) Object.assign(vars, loopVariables(`steps.${name}`, nodes, group.phase));
    else if (nodes[0]) {
      Object.assign(
        vars,
        nodeVariables(`steps.${name}`, nodes[0]),
        skippedOutputVariables(run, `steps.${name}`, nodes[0], calls[0]!.ref, scope),
      );
    }
  }
  return vars;
}
