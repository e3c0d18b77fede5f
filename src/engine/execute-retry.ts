/**
 * Templates with a `retryStrategy`: a Retry node whose children are the attempts
 * (`name(0)`, `name(1)`, …), each an ordinary node of the template's kind.
 *
 * The Retry node is Running while an attempt runs or a backoff is pending, Succeeded with the
 * outputs of the first attempt that succeeds, and otherwise ends with the phase of the last
 * attempt once retry-decision.ts says to stop (limit reached, policy, expression, maxDuration).
 * When an attempt fails and the next may start at once, it starts in the same reconcile.
 * Applies to every template kind, plugin and http templates included.
 */
import { intOrStringToFloat, intOrStringToNumber, type NodeStatus, type RetryStrategy, type Template } from '../api/index.js';
import { parseSecondsOrDuration } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFailure, isFinal, toMs } from './node-phase.js';
import { evaluateRetryExpression, renderString } from './expressions.js';
import { newNode, templateVariables, type Execution } from './invocation.js';
import { retryAttemptName } from './node-naming.js';
import { substituteExpressionTags } from './expression-tags.js';
import type { Vars } from './variables.js';
import { decideRetry, type AttemptSummary, type RetryParams, type RetryPolicyName } from './retry-decision.js';
import { errorMessage } from '../log/error-message.js';

/** Runs one attempt: the template's own executor, without the retry. */
export type AttemptRunner = (ex: Execution) => NodeStatus | undefined;

export function executeRetry(run: EngineRun, ex: Execution, runAttempt: AttemptRunner): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Retry', { phase: 'Pending' }));
  }
  const strategy = ex.resolved.template.retryStrategy!;
  let params: RetryParams;
  try {
    params = retryParams(strategy, templateVariables(run.globals, ex), `${ex.where}.retryStrategy`);
  } catch (err) {
    return run.setPhase(node, 'Error', errorMessage(err));
  }
  const timing = { timeoutStartMs: toMs(node.startedAt, run.nowMs) };
  // Advance the current attempt, and start the next one at once if it just failed and may be
  // retried without waiting. Attempts that fail instantly (a disabled plugin) could loop here, so
  // the rounds are bounded; the rest happens on the next reconcile, which is asked for.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const attempts = run.children(node);
    const last = attempts[attempts.length - 1];
    if (last && !isFinal(last.phase)) {
      const updated = runAttempt(attemptExecution(run, ex, node, attempts.length - 1, last, timing));
      if (!updated || !isFinal(updated.phase)) return mirror(run, node, updated);
      continue;
    }
    if (last && !isFailure(last.phase)) {
      if (last.outputs) node.outputs = last.outputs;
      // `steps.X.hostNodeName` of a retried step is its last attempt's (as the peer reads it).
      if (last.hostNodeName) node.hostNodeName = last.hostNodeName;
      return run.setPhase(node, last.phase, last.phase === 'Succeeded' ? '' : (last.message ?? ''));
    }
    if (last) {
      const decision = decideRetry(params, attempts.map(summary(run)), run.nowMs, () =>
        strategy.expression ? retryExpressionVerdict(run, ex, strategy.expression, last, attempts.length - 1) : true,
      );
      if (decision.kind === 'stop') {
        if (last.outputs) node.outputs = last.outputs;
        if (last.hostNodeName) node.hostNodeName = last.hostNodeName;
        return run.setPhase(node, last.phase as 'Failed' | 'Error', decision.message);
      }
      if (decision.kind === 'wait') {
        run.requeueAt(decision.at);
        run.setPhase(node, 'Running', decision.message);
        return node;
      }
    }
    if (!run.canStart()) {
      if (run.shutdown) return run.setPhase(node, last?.phase === 'Error' ? 'Error' : 'Failed', run.shutdown.message);
      return node;
    }
    if (last && timeoutPassed(run, ex, timing.timeoutStartMs)) {
      return run.setPhase(node, 'Failed', `Step exceeded its timeout of ${ex.resolved.template.timeout}`);
    }
    const index = attempts.length;
    const started = runAttempt(attemptExecution(run, ex, node, index, undefined, timing));
    if (!started) return node;
    run.addChild(node, started);
    started.retryAttempt = index;
    if (!isFinal(started.phase)) return mirror(run, node, started);
  }
  run.requeueAt(run.nowMs + 1000);
  return node;
}

const MAX_ROUNDS = 20;

/** Whether the template's `timeout`, counted from the retry node's start, has passed. */
function timeoutPassed(run: EngineRun, ex: Execution, startMs: number): boolean {
  const timeout = ex.resolved.template.timeout;
  if (timeout === undefined || timeout === '' || timeout.includes('{{')) return false;
  return run.nowMs >= startMs + parseSecondsOrDuration(timeout, { field: `${ex.where}.timeout` });
}

function attemptExecution(
  run: EngineRun,
  ex: Execution,
  node: NodeStatus,
  index: number,
  existing: NodeStatus | undefined,
  timing: { timeoutStartMs: number },
): Execution {
  const name = retryAttemptName(node.name, index);
  // An attempt is a plain run of the template: the retry strategy is this wrapper's, and its
  // fields are rendered here (retryParams, retryExpressionVerdict) with what only the wrapper
  // knows (`lastRetry.*`), not as part of the attempt's pod or task.
  const { retryStrategy: wrapper, ...own } = ex.resolved.template;
  const template = wrapper?.affinity?.nodeAntiAffinity ? avoidingHosts(own, failedHosts(node, index, run)) : own;
  return {
    ...ex,
    resolved: { ...ex.resolved, template },
    seed: { ...ex.seed, name, displayName: `${node.displayName}(${index})` },
    existing,
    timing,
    retries: index,
    lastRetry: lastRetryOf(run, node, index),
  };
}

/** While an attempt runs, the Retry node is Running (Pending until the first attempt runs). */
function mirror(run: EngineRun, node: NodeStatus, attempt: NodeStatus | undefined): NodeStatus {
  run.setPhase(node, attempt?.phase === 'Pending' ? 'Pending' : 'Running', '');
  // A ready daemon attempt makes the Retry node a ready daemon too (daemons.ts).
  if (attempt?.daemoned) {
    node.daemoned = true;
    if (attempt.podIP) node.podIP = attempt.podIP;
  }
  return node;
}

function summary(run: EngineRun) {
  return (n: NodeStatus): AttemptSummary => ({
    phase: n.phase === 'Error' ? 'Error' : 'Failed',
    ...(n.message !== undefined ? { message: n.message } : {}),
    startedAt: toMs(n.startedAt, run.nowMs),
    finishedAt: toMs(n.finishedAt, run.nowMs),
  });
}

/**
 * Whether `retryStrategy.expression` allows another attempt, or why it could not be evaluated.
 * Its `{{…}}` tags (the template's inputs, workflow variables, `retries`, `lastRetry.*`) are
 * substituted first, each as one literal (expression-tags.ts), then the expression is evaluated
 * over `lastRetry` and `retries`.
 */
function retryExpressionVerdict(run: EngineRun, ex: Execution, expression: string, last: NodeStatus, retries: number): boolean | string {
  const field = `${ex.where}.retryStrategy.expression`;
  const env = retryEnv(run, last, retries);
  const vars: Vars = { ...templateVariables(run.globals, ex), retries: env.retries };
  for (const [k, v] of Object.entries(env.lastRetry)) vars[`lastRetry.${k}`] = v;
  let text: string;
  try {
    text = substituteExpressionTags(expression, (tag) => renderString(tag, vars, field));
  } catch (err) {
    const message = errorMessage(err);
    return message.startsWith(field) ? message : `${field}: ${message}`;
  }
  return evaluateRetryExpression(text, env, field);
}

/**
 * The environment of `retryStrategy.expression`: `lastRetry.{exitCode,status,duration,message}`,
 * `retries`, all strings as in the peer. `duration` is whole seconds, as the peer's (its times
 * have second precision), so `asInt(lastRetry.duration)` works.
 */
export function retryEnv(run: Pick<EngineRun, 'nowMs'>, last: NodeStatus, retries: number) {
  const seconds = Math.floor(toMs(last.finishedAt, run.nowMs) / 1000) - Math.floor(toMs(last.startedAt, run.nowMs) / 1000);
  return {
    lastRetry: {
      exitCode: last.outputs?.exitCode ?? '-1',
      status: last.phase,
      duration: String(Math.max(0, seconds)),
      message: last.message ?? '',
    },
    retries: String(retries),
  };
}

/** `lastRetry.*` for the template of attempt `index`: the attempt before it, or the peer's values for a first attempt. */
function lastRetryOf(run: EngineRun, node: NodeStatus, index: number): Record<string, string> {
  const previous = index > 0 ? run.children(node)[index - 1] : undefined;
  return previous ? retryEnv(run, previous, index).lastRetry : { exitCode: '0', status: '', duration: '0', message: '' };
}

/** The numbers of a retryStrategy (fields may hold tags over the template's inputs). */
export function retryParams(strategy: RetryStrategy, vars: Vars, where: string): RetryParams {
  const text = (v: string | number, field: string): string => (typeof v === 'string' ? renderString(v, vars, field) : String(v));
  const params: RetryParams = { policy: (strategy.retryPolicy ?? 'OnFailure') as RetryPolicyName };
  if (strategy.limit !== undefined) params.limit = intOrStringToNumber(text(strategy.limit, `${where}.limit`), `${where}.limit`);
  const b = strategy.backoff;
  if (b?.duration !== undefined)
    params.backoffMs = parseSecondsOrDuration(text(b.duration, `${where}.backoff.duration`), { field: `${where}.backoff.duration` });
  if (b?.factor !== undefined) params.factor = intOrStringToFloat(text(b.factor, `${where}.backoff.factor`), `${where}.backoff.factor`);
  if (b?.cap !== undefined) params.capMs = parseSecondsOrDuration(text(b.cap, `${where}.backoff.cap`), { field: `${where}.backoff.cap` });
  if (b?.maxDuration !== undefined) {
    params.maxDurationMs = parseSecondsOrDuration(text(b.maxDuration, `${where}.backoff.maxDuration`), {
      field: `${where}.backoff.maxDuration`,
    });
  }
  return params;
}

/** The Kubernetes nodes earlier attempts (before `index`) that did not succeed ran on, sorted. */
function failedHosts(node: NodeStatus, index: number, run: EngineRun): string[] {
  const hosts = new Set<string>();
  for (const attempt of run.children(node).slice(0, index))
    if (isFailure(attempt.phase) && attempt.hostNodeName) hosts.add(attempt.hostNodeName);
  return [...hosts].sort();
}

/**
 * `retryStrategy.affinity.nodeAntiAffinity`: the attempt's pod must not be scheduled to `hosts`
 * (a `kubernetes.io/hostname NotIn` requirement, added to every required node selector term the
 * template already has, since terms are alternatives; or as the only term).
 */
export function avoidingHosts(template: Template, hosts: string[]): Template {
  if (hosts.length === 0) return template;
  const avoid = { key: 'kubernetes.io/hostname', operator: 'NotIn', values: hosts };
  const affinity = structuredClone(template.affinity ?? {}) as {
    nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: { matchExpressions?: unknown[] }[] } };
  };
  const required = ((affinity.nodeAffinity ??= {}).requiredDuringSchedulingIgnoredDuringExecution ??= {});
  const terms = required.nodeSelectorTerms?.length ? required.nodeSelectorTerms : [{}];
  required.nodeSelectorTerms = terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), avoid] }));
  return { ...template, affinity: affinity as Template['affinity'] };
}
