/**
 * Lifecycle hooks: every key of `hooks` but `exit` (which exit-hooks.ts runs), each with an
 * `expression`. A hook starts the first time its expression holds, runs in parallel with what it
 * is attached to, and runs at most once (its node exists from then on and is only advanced):
 *
 *   hooks:
 *     running: { expression: 'steps["build"].status == "Running"', template: notify }
 *
 * - on a step or task (one hook per item of a looped step or loop item of a task) the expression
 *   sees the step's or task's own variables as they are now (`steps.X.status` is `Running` while it
 *   runs) besides everything its siblings see; the hook node is `<owner>.hooks.<key>`, a child of
 *   the owner;
 * - on the workflow (`spec.hooks`) it sees the workflow's variables, with `workflow.status`
 *   `Running` while the entrypoint runs and the entrypoint's phase once it ended; the node is
 *   `<workflow>.hooks.<key>`.
 *
 * The owner counts as done only once every hook that started has finished (then its exit hook
 * may start). A hook that ends Failed is ignored; one that ends Error (it could not be started,
 * its expression could not be evaluated, its pod errored) fails the Steps or DAG template — or the
 * workflow for a workflow-level hook — whatever `continueOn` says, as the peer documents. Hooks do
 * not start after a deadline, Stop or Terminate; those already running are advanced.
 */
import type { LifecycleHook, LifecycleHooks, NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';
import { RecursionLimitError, executeTemplate } from './execute-template.js';
import { checkExpression, checkTags, evaluateCondition, renderValue } from './expressions.js';
import { lifecycleHookName } from './node-naming.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** The conditional hooks of `hooks` (every key but `exit`), in key order so node creation is deterministic. */
export function lifecycleHooksOf(hooks: LifecycleHooks | undefined): Array<[string, LifecycleHook]> {
  if (!hooks) return [];
  return Object.entries(hooks)
    .filter(([key]) => key !== 'exit')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export interface HooksProgress {
  /** A hook that started has not finished. */
  pending: boolean;
  /** The first hook that ended in Error. */
  errored: NodeStatus | undefined;
}

export interface HookOwner {
  /** The owner's node name (the workflow's name for workflow-level hooks). */
  name: string;
  /** Its display name, the prefix of the hook nodes' display names. */
  displayName: string;
  boundaryID?: string;
  /** The owner's node, which the hook nodes become children of (none for the workflow). */
  node?: NodeStatus;
}

/**
 * Starts the hooks whose expression holds now and advances those already started. `where` is the
 * owner's field path (`spec` or `spec.templates[main].steps[0][build]`), for messages.
 */
export function advanceLifecycleHooks(
  run: EngineRun,
  hooks: LifecycleHooks | undefined,
  owner: HookOwner,
  vars: Vars,
  scope: string | undefined,
  where: string,
): HooksProgress {
  const progress: HooksProgress = { pending: false, errored: undefined };
  for (const [key, hook] of lifecycleHooksOf(hooks)) {
    const node = advanceHook(run, key, hook, owner, vars, scope, `${where}.hooks.${key}`);
    if (!node) continue;
    if (owner.node) run.addChild(owner.node, node);
    if (!isFinal(node.phase)) progress.pending = true;
    else if (node.phase === 'Error') progress.errored ??= node;
  }
  return progress;
}

function advanceHook(
  run: EngineRun,
  key: string,
  hook: LifecycleHook,
  owner: HookOwner,
  vars: Vars,
  scope: string | undefined,
  field: string,
): NodeStatus | undefined {
  const name = lifecycleHookName(owner.name, key);
  const existing = run.nodeByName(name);
  if (existing && isFinal(existing.phase)) return existing;
  const base = {
    name,
    displayName: `${owner.displayName}.hooks.${key}`,
    ...(owner.boundaryID ? { boundaryID: owner.boundaryID } : {}),
  };
  try {
    if (!existing) {
      if (!run.canStart()) return undefined;
      if (!evaluateCondition(hook.expression ?? 'false', vars, `${field}.expression`)) return undefined;
    }
    const args = hook.arguments ? renderValue(hook.arguments, vars, `${field}.arguments`) : undefined;
    return executeTemplate(run, {
      ...base,
      ref: {
        ...(hook.template !== undefined ? { template: hook.template } : {}),
        ...(hook.templateRef ? { templateRef: hook.templateRef } : {}),
      },
      scope,
      args,
    });
  } catch (err) {
    if (err instanceof RecursionLimitError) throw err;
    if (existing) return run.setPhase(existing, 'Error', errorMessage(err));
    return run.createNode({ ...base, type: 'Pod', phase: 'Error', message: errorMessage(err) });
  }
}

/**
 * What is wrong with hook `key`'s expression, as [field suffix, message], or undefined: a
 * conditional hook needs a valid one; the exit hook runs whenever its owner ends and takes none.
 */
export function hookExpressionProblem(key: string, hook: LifecycleHook): [string, string] | undefined {
  if (key === 'exit') {
    if (hook.expression === undefined) return undefined;
    return [
      '.expression',
      'is not read on the exit hook, which runs whenever its owner ends; give the hook another name to run it on a condition',
    ];
  }
  if (typeof hook.expression !== 'string' || hook.expression.trim() === '')
    return [
      '',
      'needs an expression (for example steps.X.status == "Running" or workflow.status == "Running"): only the exit hook runs without one',
    ];
  const bad = hook.expression.includes('{{') ? checkTags(hook.expression) : checkExpression(hook.expression);
  return bad ? ['.expression', bad] : undefined;
}
