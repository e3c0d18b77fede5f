/**
 * The plugin call state machine of one task (COMPAT.md "Plugin call state machine"). Pure: the
 * clock value, the 404 cache and the jitter come in as arguments, so every rule is a unit test.
 *
 *   nextStep(state, now, notImplemented)  → call plugin X | wait until T | done with a result
 *   applyOutcome(state, outcome, now, …)  → new state, maybe a result to report
 *
 * Rules:
 * - Order: the plugin named by the template's single `plugin` key first, then the others in the
 *   given (sorted) order. The peer calls every plugin for every task.
 * - `node` → that result; `{}`/`null` → next plugin; 404 → next plugin and never again in this
 *   workflow; transient (503, connection, timeout, EOF) → same plugin after exponential backoff
 *   with jitter, fatal after the last attempt; anything else → fatal, the node Fails.
 * - Every `node` is checked against the contract first (reply-validation.ts): a reply that breaks
 *   it is fatal, the node Fails naming the problem; only the checked fields are ever reported.
 * - A Pending/Running node with `requeue` → report it and call the same plugin first again after
 *   that long. A final phase ends the task even with a requeue. Without requeue a Pending/Running
 *   node is reported and the agent stops calling (the spec calls again only when asked to).
 */
import type { ExecuteTemplateReply, NodePhase, NodeResult, Template } from '../api/index.js';
import { checkReply } from './reply-validation.js';

/** What one call of a plugin came to, as the RPC client classifies it. */
export type CallOutcome =
  | { kind: 'reply'; reply: ExecuteTemplateReply }
  /** `200` with `{}`, `null` or no node: not this plugin's template. */
  | { kind: 'skip' }
  /** `404`: the plugin does not implement the method. */
  | { kind: 'notImplemented' }
  | { kind: 'transient'; reason: string }
  | { kind: 'fatal'; message: string };

export interface RetryPolicy {
  /** Calls of one plugin before a transient failure becomes fatal. */
  attempts: number;
  /** Wait after the first failed attempt; doubles after each. */
  baseDelayMs: number;
  /** Extra random share of each wait: 0.2 waits between 1× and 1.2×. */
  jitter: number;
}

/** The peer's values: 5 attempts, 1 s doubling, 20 % jitter. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 1000, jitter: 0.2 };

export const NO_PLUGIN_MESSAGE = 'no plugin executed the template';

export interface TaskState {
  /** Plugins in call order for the current round. */
  readonly order: readonly string[];
  /** Index into `order` of the plugin to call next. */
  readonly position: number;
  /** Failed transient attempts on the current plugin. */
  readonly failures: number;
  /** No call before this time (ms since the epoch); set by backoff and requeue. */
  readonly wakeAt?: number;
  /** Set once the task is over. */
  readonly result?: NodeResult;
}

export type NextStep =
  { kind: 'call'; plugin: string; attempt: number } | { kind: 'wait'; until: number } | { kind: 'done'; result: NodeResult };

export interface Applied {
  state: TaskState;
  /** A result to write into the TaskSet status now (interim or final). */
  report?: NodeResult;
  /** A plugin that answered 404: add it to the workflow's cache. */
  notImplemented?: string;
}

const FINAL: ReadonlySet<string> = new Set<NodePhase>(['Succeeded', 'Failed', 'Error']);

/** The plugin named by the template's `plugin` section, when it has exactly one key. */
export function preferredPlugin(template: Pick<Template, 'plugin'>): string | undefined {
  const keys = template.plugin && typeof template.plugin === 'object' ? Object.keys(template.plugin) : [];
  return keys.length === 1 ? keys[0] : undefined;
}

/** Call order: `first` (if installed) then the rest in their given order. */
export function callOrder(plugins: readonly string[], first: string | undefined): string[] {
  if (first === undefined || !plugins.includes(first)) return [...plugins];
  return [first, ...plugins.filter((p) => p !== first)];
}

export function startTask(template: Pick<Template, 'plugin'>, plugins: readonly string[]): TaskState {
  return { order: callOrder(plugins, preferredPlugin(template)), position: 0, failures: 0 };
}

/** What to do now. Skips plugins known not to implement the method. */
export function nextStep(state: TaskState, now: number, notImplemented: ReadonlySet<string>): { state: TaskState; step: NextStep } {
  if (state.result) return { state, step: { kind: 'done', result: state.result } };
  if (state.wakeAt !== undefined && state.wakeAt > now) return { state, step: { kind: 'wait', until: state.wakeAt } };
  let position = state.position;
  while (position < state.order.length && notImplemented.has(state.order[position]!)) position++;
  if (position >= state.order.length) {
    const result: NodeResult = { phase: 'Failed', message: NO_PLUGIN_MESSAGE };
    return { state: { ...state, position, result }, step: { kind: 'done', result } };
  }
  const next = position === state.position ? state : { ...state, position, failures: 0 };
  return { state: next, step: { kind: 'call', plugin: state.order[position]!, attempt: next.failures + 1 } };
}

/**
 * Folds the outcome of calling the current plugin into the state. `random` is a number in [0, 1)
 * for the backoff jitter.
 */
export function applyOutcome(
  state: TaskState,
  outcome: CallOutcome,
  now: number,
  random: number,
  retry: RetryPolicy = DEFAULT_RETRY,
): Applied {
  const plugin = state.order[state.position]!;
  const moveOn = (): TaskState => ({ order: state.order, position: state.position + 1, failures: 0 });
  const finish = (result: NodeResult): Applied => {
    const s: TaskState = { ...state, wakeAt: undefined, result };
    return { state: s, report: result };
  };
  switch (outcome.kind) {
    case 'skip':
      return { state: moveOn() };
    case 'notImplemented':
      return { state: moveOn(), notImplemented: plugin };
    case 'fatal':
      return finish({ phase: 'Failed', message: outcome.message });
    case 'transient': {
      const failures = state.failures + 1;
      if (failures >= retry.attempts) {
        return finish({ phase: 'Failed', message: `plugin ${plugin} failed ${failures} times: ${outcome.reason}` });
      }
      return { state: { ...state, failures, wakeAt: now + backoffDelay(failures, random, retry) } };
    }
    case 'reply':
      return applyReply(state, plugin, outcome.reply, now, finish);
  }
}

function applyReply(
  state: TaskState,
  plugin: string,
  reply: ExecuteTemplateReply,
  now: number,
  finish: (r: NodeResult) => Applied,
): Applied {
  // Checked against the contract and rebuilt from the checked fields (reply-validation.ts).
  const checked = checkReply(plugin, reply);
  if (!checked.ok) return finish(checked.result);
  const result = checked.result;
  if (FINAL.has(result.phase!) || checked.requeueMs === undefined) return finish(result);
  // Call the same plugin first again: it has claimed the template.
  const order = [plugin, ...state.order.filter((p) => p !== plugin)];
  return { state: { order, position: 0, failures: 0, wakeAt: now + checked.requeueMs }, report: result };
}

/** Wait after the n-th failed attempt: base × 2^(n−1) × (1 + jitter × random). */
export function backoffDelay(failures: number, random: number, retry: RetryPolicy = DEFAULT_RETRY): number {
  return retry.baseDelayMs * 2 ** (failures - 1) * (1 + retry.jitter * random);
}
