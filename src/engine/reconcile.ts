/**
 * The engine's entry point: from a workflow (with the status persisted last time) and what the
 * controller observed, compute the new status and the actions to take.
 *
 * Pure and deterministic: the time comes from `observations.now`, ids and pod names from node
 * names; the same inputs give the same outputs. Everything that must be remembered between calls
 * is in the returned status (nodes, startedAt, global outputs), so a restarted controller neither
 * duplicates nor forgets work.
 *
 * One call:
 * 1. a finished workflow only gets clean-up actions (stray pods, the TaskSet);
 * 2. on the first call the spec (merged with its WorkflowTemplate, if any) is validated; any
 *    error fails the workflow at once with a message naming the template and field;
 * 3. the deadline (`spec.activeDeadlineSeconds`) and `spec.shutdown` decide whether new work may
 *    start; `spec.suspend` pauses starting new work;
 * 4. the entrypoint is walked from the root (execute-template.ts and friends), advancing every
 *    node from the observations and starting what may start;
 * 5. the workflow's lifecycle hooks (`spec.hooks` but exit) start when their expression holds;
 * 6. once the entrypoint and the started hooks are done, the exit handler (`spec.onExit` or
 *    `spec.hooks.exit`) runs as `<wf>.onExit` (not after Terminate); then the workflow ends:
 *    Succeeded only if both succeeded and no hook ended in Error.
 * Templates nested deeper than MAX_TEMPLATE_DEPTH (recursion) fail the workflow at once.
 */
import {
  FINAL_WORKFLOW_PHASES,
  type NodeStatus,
  type Parameter,
  type Workflow,
  type WorkflowSpec,
  type WorkflowStatus,
} from '../api/index.js';
import type { Observations, ReconcileResult } from './contract.js';
import { effectiveSpec } from './effective-spec.js';
import { decideAgent } from './agent-replacement.js';
import { EngineRun, type Shutdown } from './engine-run.js';
import { isFailure, isFinal, toMs } from './node-phase.js';
import { executeTemplate, RecursionLimitError } from './execute-template.js';
import { renderValue } from './expressions.js';
import { memoActions } from './memoize.js';
import { advanceLifecycleHooks } from './lifecycle-hooks.js';
import { keepFinishedResults } from './node-lifecycle.js';
import { exitHookName } from './node-naming.js';
import { globalArtifacts, globalOutputs } from './outputs.js';
import { updateProgress } from './progress.js';
import { mayLinkTwice } from './dag-sharing.js';
import { TemplateResolver } from './template-resolver.js';
import { templateDecorator } from './template-defaults.js';
import { validateWorkflow } from './validate.js';
import { LockBook, lockSpecsOf, workflowHolder } from './synchronization.js';
import { podGCActions, ttlActions } from './workflow-gc.js';
import { resourceActions } from './workflow-resources.js';
import { workflowMetadataAction } from './workflow-metadata.js';
import { withWorkflowPlugins } from './workflow-plugins.js';
import { cleanupActions, finalize } from './final-actions.js';
import { exitHandlerVariables, workflowDuration, workflowVariables } from './variables.js';
import { errorMessage } from '../log/error-message.js';

export function reconcileWorkflow(workflow: Workflow, observations: Observations): ReconcileResult {
  const run = reconcileRun(workflow, observations);
  // A node result is never lost or reverted (node-lifecycle.ts): what the run would change of a
  // finished node is put back, and named so that the controller reports the bug.
  const kept = keepFinishedResults(workflow.status, run.status, run.nodeDelta);
  const result = kept.restored.length > 0 ? { ...run, status: kept.status, restored: kept.restored } : run;
  // Collection (spec.podGC, spec.ttlStrategy) follows from the new status alone (workflow-gc.ts).
  const spec = result.spec ?? gcSpec(workflow, observations);
  const nowMs = Date.parse(observations.now);
  const gc = [
    ...podGCActions({ podGC: spec.podGC, status: result.status, pods: observations.pods, nowMs }),
    ...ttlActions({ ttlStrategy: spec.ttlStrategy, status: result.status, nowMs }),
    ...resourceActions({ spec, status: result.status, pods: observations.pods }),
    ...memoActions(result.status, observations.memoCaches),
  ];
  return gc.length > 0 ? { ...result, actions: finalize([...result.actions, ...gc]) } : result;
}

/** The spec whose podGC / ttlStrategy apply when the engine did not walk the workflow. */
function gcSpec(workflow: Workflow, observations: Observations): WorkflowSpec {
  const merged = effectiveSpec(workflow, observations.templates ?? {});
  return merged.ok ? merged.spec : (workflow.spec ?? {});
}

function reconcileRun(workflow: Workflow, observations: Observations): ReconcileResult {
  const previous: WorkflowStatus = workflow.status ?? {};
  if (previous.phase && FINAL_WORKFLOW_PHASES.includes(previous.phase)) {
    return { status: previous, actions: finalize(cleanupActions(previous, observations, true)) };
  }
  const nowMs = Date.parse(observations.now);
  if (Number.isNaN(nowMs)) throw new Error(`observations.now is not an ISO-8601 time: ${JSON.stringify(observations.now)}`);
  const now = new Date(nowMs).toISOString();
  const sources = observations.templates ?? {};
  const merged = effectiveSpec(workflow, sources);
  if (!merged.ok) return failAtOnce(previous, now, merged.error);
  const spec = merged.spec;
  const firstRun = !previous.phase || previous.phase === 'Pending';
  if (firstRun) {
    const errors = validateWorkflow(workflow, sources, merged, observations);
    if (errors.length > 0) return failAtOnce(previous, now, `invalid spec: ${errors.map((e) => e.message).join('; ')}`);
  }
  const name = workflow.metadata?.name ?? '';
  let globals: Record<string, string>;
  try {
    globals = workflowVariables(workflow, spec, [], observations.parameterConfigMaps);
  } catch (err) {
    return failAtOnce(previous, now, errorMessage(err));
  }
  const agent = decideAgent(previous.agent, observations.agent);
  const run = new EngineRun(
    name,
    previous.nodes,
    { ...withWorkflowPlugins(observations, spec), agent: agent.agent },
    new TemplateResolver(spec.templates ?? [], sources, templateDecorator(spec)),
    spec.parallelism,
    globals,
  );
  const namespace = workflow.metadata?.namespace ?? 'default';
  run.namespace = namespace;
  run.locks = new LockBook(observations.locks ?? {}, (holder) => holderAlive(holder, workflowHolder(namespace, name), run.nodes));
  restoreGlobals(run);
  const metadata = workflowMetadataAction(workflow, spec, run.globals);
  if ('error' in metadata) return failAtOnce(previous, now, metadata.error);
  if (metadata.action) run.emit(metadata.action);
  run.podSpecPatch = spec.podSpecPatch;
  run.serviceAccountName = spec.serviceAccountName;
  run.activePods = countActivePods(run);
  const startedAt = previous.startedAt ?? run.now;
  // `workflow.status` is the workflow's phase, as the peer gives it everywhere: Running while the
  // templates run (the exit handler sets the final one).
  run.setGlobals({ 'workflow.duration': workflowDuration(toMs(startedAt, run.nowMs), run.nowMs), 'workflow.status': 'Running' });
  run.shutdown = shutdownOf(spec, toMs(startedAt, run.nowMs), run);
  run.paused = spec.suspend === true;

  // The workflow's own locks (spec.synchronization): nothing starts before it holds them all.
  const wfLocks = lockSpecsOf(spec.synchronization, namespace, 'spec.synchronization', run.globals);
  if (!wfLocks.ok) return failAtOnce(previous, now, wfLocks.error);
  if (wfLocks.locks.length > 0 && !run.shutdown) {
    const got = run.locks.acquire(wfLocks.locks, workflowHolder(namespace, name));
    if (got.kind === 'error') return failAtOnce(previous, now, got.message);
    // Nothing runs yet (a new workflow, or one retried with only finished nodes): it waits.
    if (got.kind === 'waiting' && Object.values(run.nodes).every((n) => isFinal(n.phase))) return waitForLock(previous, run, got.message);
  }

  let walked: Walked;
  try {
    walked = walk(run, name, spec);
  } catch (err) {
    if (err instanceof RecursionLimitError) return abort(run, previous, startedAt, observations, err.message);
    throw err;
  }
  const { root, mainDone, exitNode, exitDone, hookError } = walked;

  const status: WorkflowStatus = { ...previous, phase: 'Running', startedAt, nodes: run.nodes };
  delete status.message;
  // A failed agent pod is replaced (and counted) only while some task still waits for an agent.
  if (agent.replace && run.actions.some((a) => a.kind === 'ensureAgent')) {
    status.agent = agent.replace.record;
    run.emit(agent.replace.action);
  }
  if (run.paused) status.message = 'workflow suspended (spec.suspend is true)';
  const outputs = [...run.globalOutputs].map(([n, value]): Parameter => ({ name: n, value }));
  if (outputs.length > 0) status.outputs = { ...(previous.outputs ?? {}), parameters: outputs };
  if (run.globalArtifacts.size > 0)
    status.outputs = { ...(status.outputs ?? previous.outputs ?? {}), artifacts: [...run.globalArtifacts.values()] };
  const progress = updateProgress(run.nodes, {
    rewritten: run.touched,
    mayShare: run.hasDagNode && mayLinkTwice(spec.templates ?? [], sources),
    ids: [...run.nodeIds()],
  });
  if (progress) status.progress = progress;

  const complete = mainDone && exitDone;
  if (complete) {
    const { phase, message } = outcome(root, exitNode, run.shutdown, hookError);
    status.phase = phase;
    if (message) status.message = message;
    status.finishedAt = run.now;
    run.locks.releaseAll();
  } else if (run.requeueAtMs !== undefined) {
    run.emit({ kind: 'requeueAt', at: new Date(run.requeueAtMs).toISOString() });
  }
  const sync = run.locks.status();
  if (sync) status.synchronization = sync;
  else delete status.synchronization;
  const actions = [...run.actions, ...cleanupActions(status, observations, complete)];
  const nodeDelta = previous.nodes ? { from: previous.nodes, touched: run.touched, failed: run.failedIds } : undefined;
  return { status, actions: finalize(actions), spec, locks: run.locks.claims(), ...(nodeDelta ? { nodeDelta } : {}) };
}

/** The workflow waits, Pending, for its workflow-level locks: nothing has started yet. */
function waitForLock(previous: WorkflowStatus, run: EngineRun, message: string): ReconcileResult {
  const status: WorkflowStatus = { ...previous, phase: 'Pending', message, nodes: previous.nodes ?? {} };
  const sync = run.locks.status();
  if (sync) status.synchronization = sync;
  return { status, actions: finalize(run.actions.filter((a) => a.kind === 'setWorkflowMetadata')), locks: run.locks.claims() };
}

/** Whether a lock holder of this workflow still runs: the workflow itself, or a node that has not ended. */
function holderAlive(holder: string, workflow: string, nodes: Record<string, NodeStatus>): boolean {
  if (holder === workflow) return true;
  if (!holder.startsWith(`${workflow}/`)) return false;
  const node = nodes[holder.slice(workflow.length + 1)];
  return node !== undefined && !isFinal(node.phase);
}

interface Walked {
  root: NodeStatus | undefined;
  /** The entrypoint and every workflow-level lifecycle hook that started are finished. */
  mainDone: boolean;
  exitNode: NodeStatus | undefined;
  exitDone: boolean;
  /** A workflow-level lifecycle hook that ended in Error. */
  hookError: NodeStatus | undefined;
}

/** Walks the entrypoint, then (once it is done) the workflow's exit handler. */
function walk(run: EngineRun, name: string, spec: WorkflowSpec): Walked {
  const root = executeTemplate(run, { name, ref: { template: spec.entrypoint ?? '' }, scope: undefined, args: spec.arguments });
  const entryDone = root ? isFinal(root.phase) : run.shutdown !== undefined;
  // Lifecycle hooks (lifecycle-hooks.ts) see workflow.status Running until the entrypoint ended.
  const hookVars = {
    ...run.globals,
    ...(entryDone ? exitHandlerVariables(root?.phase ?? 'Failed', run.nodes) : { 'workflow.status': 'Running' }),
  };
  const hooks = advanceLifecycleHooks(run, spec.hooks, { name, displayName: name }, hookVars, undefined, 'spec');
  const mainDone = entryDone && !hooks.pending;
  let exitDone = true;
  let exitNode: NodeStatus | undefined;
  const exitHook = spec.hooks?.exit ?? (spec.onExit ? { template: spec.onExit } : undefined);
  if (mainDone && exitHook && (!run.shutdown || run.shutdown.runExitHandlers || run.nodeByName(exitHookName(name)))) {
    run.setGlobals(exitHandlerVariables(root?.phase ?? 'Failed', run.nodes));
    try {
      const args = exitHook.arguments ? renderValue(exitHook.arguments, run.globals, 'spec.hooks.exit.arguments') : undefined;
      exitNode = run.asExitHandler(() =>
        executeTemplate(run, {
          name: exitHookName(name),
          displayName: 'onExit',
          ref: {
            ...(exitHook.template !== undefined ? { template: exitHook.template } : {}),
            ...(exitHook.templateRef ? { templateRef: exitHook.templateRef } : {}),
          },
          scope: undefined,
          args,
        }),
      );
    } catch (err) {
      if (err instanceof RecursionLimitError) throw err;
      exitNode =
        run.nodeByName(exitHookName(name)) ??
        run.createNode({ name: exitHookName(name), displayName: 'onExit', type: 'Pod', phase: 'Error', message: errorMessage(err) });
    }
    exitDone = exitNode !== undefined && isFinal(exitNode.phase);
  }
  return { root, mainDone, exitNode, exitDone, hookError: hooks.errored };
}

/**
 * Ends the workflow at once because its templates nest too deep (RecursionLimitError): every
 * unfinished node ends in Error with the message, nothing new is started (the actions of the
 * aborted walk are dropped), and running pods are cleaned up as for any finished workflow.
 */
function abort(run: EngineRun, previous: WorkflowStatus, startedAt: string, observations: Observations, message: string): ReconcileResult {
  for (const node of Object.values(run.nodes)) if (!isFinal(node.phase)) run.setPhase(node, 'Error', message);
  const status: WorkflowStatus = { ...previous, phase: 'Failed', message, startedAt, finishedAt: run.now, nodes: run.nodes };
  delete status.synchronization;
  const progress = updateProgress(run.nodes);
  if (progress) status.progress = progress;
  return { status, actions: finalize(cleanupActions(status, observations, true)) };
}

/** Fails a workflow that cannot run at all (invalid spec, missing WorkflowTemplate). */
function failAtOnce(previous: WorkflowStatus, now: string, message: string): ReconcileResult {
  const status: WorkflowStatus = {
    ...previous,
    phase: 'Failed',
    message,
    startedAt: previous.startedAt ?? now,
    finishedAt: now,
    nodes: previous.nodes ?? {},
  };
  delete status.synchronization;
  return { status, actions: [] };
}

/** Global outputs of finished nodes, oldest first, so later exports win as they did when they happened. */
function restoreGlobals(run: EngineRun): void {
  // Only nodes that export something are sorted (a loop's 100,000 items mostly do not); the run
  // found them while it copied the nodes in.
  const done = [...run.exporters];
  done.sort((a, b) => (a.finishedAt ?? '').localeCompare(b.finishedAt ?? '') || a.name.localeCompare(b.name));
  for (const n of done) {
    for (const [g, v] of globalOutputs(n.outputs)) run.exportGlobal(g, v);
    for (const [g, a] of globalArtifacts(n.outputs)) run.exportGlobalArtifact(g, a);
  }
}

/** Pods that will still be running after this reconcile (compared with `spec.parallelism`). */
function countActivePods(run: EngineRun): number {
  let n = 0;
  // Called before the walk: the unfinished nodes are those the run began with.
  for (const id of run.openIds) {
    const node = run.nodes[id]!;
    if (node.type !== 'Pod' || isFinal(node.phase) || !node.podName) continue;
    const obs = run.pods.get(node.id);
    if (obs && (obs.phase === 'Succeeded' || obs.phase === 'Failed' || obs.phase === 'Deleted')) continue;
    n++;
  }
  return n;
}

function shutdownOf(spec: WorkflowSpec, startedMs: number, run: EngineRun): Shutdown | undefined {
  if (spec.shutdown === 'Terminate') return { message: 'Stopped with strategy "Terminate"', runExitHandlers: false };
  if (spec.shutdown === 'Stop') return { message: 'Stopped with strategy "Stop"', runExitHandlers: true };
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    const deadline = startedMs + spec.activeDeadlineSeconds * 1000;
    if (run.nowMs >= deadline) {
      return {
        message: `Workflow exceeded its deadline (spec.activeDeadlineSeconds ${spec.activeDeadlineSeconds})`,
        runExitHandlers: true,
      };
    }
    run.requeueAt(deadline);
  }
  return undefined;
}

function outcome(
  root: NodeStatus | undefined,
  exitNode: NodeStatus | undefined,
  shutdown: Shutdown | undefined,
  hookError: NodeStatus | undefined,
): { phase: 'Succeeded' | 'Failed' | 'Error'; message?: string } {
  if (!root) return { phase: 'Failed', message: shutdown?.message ?? 'the entrypoint never started' };
  if (root.phase !== 'Succeeded' && root.phase !== 'Skipped') {
    const phase = root.phase === 'Error' ? 'Error' : 'Failed';
    return { phase, message: shutdown?.message ?? root.message ?? phase };
  }
  if (exitNode && isFailure(exitNode.phase))
    return { phase: 'Failed', message: `exit handler failed: ${exitNode.message ?? exitNode.phase}` };
  if (hookError) return { phase: 'Failed', message: `hook "${hookError.displayName}" errored: ${hookError.message ?? 'Error'}` };
  return { phase: 'Succeeded' };
}
