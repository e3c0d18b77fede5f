/**
 * Runs one task of the TaskSet to its end: a plugin template through the call state machine and
 * the RPC client, an http template through the http executor. The clock, the randomness and the
 * sleeping are the only impure parts here; every decision is the machine's.
 */
import type { NodeResult, Template } from '../api/index.js';
import type { Logger } from '../log/logger.js';
import { sleep } from '../kube/backoff.js';
import { applyOutcome, DEFAULT_RETRY, nextStep, startTask, type CallOutcome, type RetryPolicy } from './call-machine.js';
import { boundResult } from './reply-validation.js';
import type { WorkerPool } from './worker-pool.js';

export interface WorkflowRef {
  name: string;
  namespace: string;
  uid: string;
}

export interface TaskRunnerDeps {
  workflow: WorkflowRef;
  /** Installed plugins, sorted by name. */
  plugins: readonly string[];
  /** Calls one plugin with a serialised ExecuteTemplateArgs. */
  callPlugin: (plugin: string, body: string) => Promise<CallOutcome>;
  /** Runs an http template. */
  runHttp: (template: Template, signal: AbortSignal) => Promise<NodeResult>;
  /** Plugins that answered 404 in this workflow (shared by all tasks). */
  notImplemented: Set<string>;
  pool: WorkerPool;
  report: (nodeId: string, result: NodeResult) => void;
  log: Logger;
  retry?: RetryPolicy;
  clock?: () => number;
  random?: () => number;
  /** Observes each plugin call (metrics). */
  onCall?: (plugin: string, outcome: CallOutcome['kind'], seconds: number) => void;
}

/** Longest single timer: Node fires a longer setTimeout at once (a long requeue would spin). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs a task until it has a result to keep, or the signal aborts (agent shutting down). Every
 * result reported passes `boundResult` (bounded message, a Failed/Error always with a message,
 * bounded outputs), whatever produced it.
 */
export async function runTask(nodeId: string, template: Template, original: TaskRunnerDeps, signal: AbortSignal): Promise<void> {
  const deps: TaskRunnerDeps = { ...original, report: (id, result) => original.report(id, boundResult(result)) };
  if (template.http) {
    const result = await deps.pool.run(() => deps.runHttp(template, signal));
    if (!signal.aborted) deps.report(nodeId, result);
    return;
  }
  if (!template.plugin) {
    deps.report(nodeId, {
      phase: 'Failed',
      message: `task ${nodeId} (template ${template.name}) has neither a plugin nor an http section`,
    });
    return;
  }
  await runPluginTask(nodeId, template, deps, signal);
}

async function runPluginTask(nodeId: string, template: Template, deps: TaskRunnerDeps, signal: AbortSignal): Promise<void> {
  const clock = deps.clock ?? Date.now;
  const random = deps.random ?? Math.random;
  const retry = deps.retry ?? DEFAULT_RETRY;
  const body = JSON.stringify({
    workflow: { metadata: { name: deps.workflow.name, namespace: deps.workflow.namespace, uid: deps.workflow.uid } },
    template,
  });
  let state = startTask(template, deps.plugins);
  while (!signal.aborted) {
    const next = nextStep(state, clock(), deps.notImplemented);
    state = next.state;
    const step = next.step;
    if (step.kind === 'done') {
      // Only "no plugin executed the template" ends here: results of outcomes return below.
      deps.report(nodeId, step.result);
      return;
    }
    if (step.kind === 'wait') {
      // Long waits are slept in pieces; the machine says `wait` again until the time has come.
      await sleep(Math.min(step.until - clock(), MAX_TIMER_MS), signal);
      continue;
    }
    const started = performance.now();
    const outcome = await deps.pool.run(() => deps.callPlugin(step.plugin, body));
    if (signal.aborted) return;
    deps.onCall?.(step.plugin, outcome.kind, (performance.now() - started) / 1000);
    logOutcome(deps.log, nodeId, step.plugin, step.attempt, outcome);
    const applied = applyOutcome(state, outcome, clock(), random(), retry);
    state = applied.state;
    if (applied.notImplemented) deps.notImplemented.add(applied.notImplemented);
    if (applied.report) {
      deps.report(nodeId, applied.report);
      if (state.result) return;
    }
  }
}

function logOutcome(log: Logger, nodeId: string, plugin: string, attempt: number, outcome: CallOutcome): void {
  switch (outcome.kind) {
    case 'transient':
      log.warn('plugin call failed; will retry', { nodeId, plugin, attempt, reason: outcome.reason });
      return;
    case 'fatal':
      log.warn('plugin call failed', { nodeId, plugin, attempt, message: outcome.message });
      return;
    case 'notImplemented':
      log.info('plugin does not implement template.execute; not calling it again in this workflow', { nodeId, plugin });
      return;
    default:
      log.debug('plugin call', { nodeId, plugin, attempt, outcome: outcome.kind });
  }
}
