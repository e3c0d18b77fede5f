/**
 * Exit hooks of steps and DAG tasks (`hooks.exit`, or the older `onExit: <template>`): a template
 * that runs once its step or task has finished, whatever the outcome, as node `<owner>.onExit`,
 * a child of the owner.
 *
 * The step or task counts as done for its siblings and dependents only after its hook finished;
 * the hook's own outcome does not change the owner's phase (it is visible on the hook node).
 * Like the workflow's exit handler, hooks run after a deadline or Stop, but not after Terminate.
 * Hook arguments see the owner's results under its usual name (`steps.X.…` / `tasks.X.…`).
 */
import type { LifecycleHook, NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal, isFulfilled } from './node-phase.js';
import type { CallSite } from './call-expansion.js';
import { renderValue } from './expressions.js';
import { executeTemplate } from './execute-template.js';
import { advanceLifecycleHooks } from './lifecycle-hooks.js';
import { exitHookName } from './node-naming.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** The exit hook of a step or task, if it has one. */
export function exitHookOf(site: CallSite): LifecycleHook | undefined {
  if (site.hooks?.exit) return site.hooks.exit;
  if (site.onExit) return { template: site.onExit };
  return undefined;
}

/**
 * Advances every hook of the step or task node `owner`: its lifecycle hooks (lifecycle-hooks.ts)
 * while it runs and once it ended, then — once it ended and they finished — its exit hook.
 * `vars` is called only when the node has hooks (it builds the owner's variables). `done`: the
 * owner and all its hooks are finished; `errored`: a lifecycle hook that ended in Error.
 */
export function advanceHooks(
  run: EngineRun,
  site: CallSite,
  owner: NodeStatus,
  vars: () => Vars,
  scope: string | undefined,
  where: string,
): { done: boolean; errored: NodeStatus | undefined } {
  if (!site.hooks && site.onExit === undefined) return { done: isFulfilled(owner), errored: undefined };
  const v = vars();
  const ownerRef = {
    name: owner.name,
    displayName: owner.displayName,
    node: owner,
    ...(owner.boundaryID ? { boundaryID: owner.boundaryID } : {}),
  };
  const life = advanceLifecycleHooks(run, site.hooks, ownerRef, v, scope, where);
  if (!isFulfilled(owner) || life.pending) return { done: false, errored: life.errored };
  // A ready daemon goes on running; validation refuses an exit hook on one (daemons.ts).
  if (!isFinal(owner.phase)) return { done: true, errored: life.errored };
  return { done: advanceExitHook(run, site, owner, v, scope, where), errored: life.errored };
}

/**
 * Advances the exit hook of the finished node `owner`; true when there is nothing left to wait
 * for (no hook, hook finished, or hooks do not run because the workflow was terminated).
 */
export function advanceExitHook(
  run: EngineRun,
  site: CallSite,
  owner: NodeStatus,
  vars: Vars,
  scope: string | undefined,
  where: string,
): boolean {
  const hook = exitHookOf(site);
  if (!hook || !isFinal(owner.phase)) return hook === undefined;
  if (run.shutdown && !run.shutdown.runExitHandlers && !run.nodeByName(exitHookName(owner.name))) return true;
  const name = exitHookName(owner.name);
  let args = hook.arguments;
  try {
    if (args) args = renderValue(args, vars, `${where}.hooks.exit.arguments`);
  } catch (err) {
    const existing = run.nodeByName(name);
    const node =
      existing ??
      run.createNode({
        name,
        type: 'Pod',
        phase: 'Error',
        message: errorMessage(err),
        ...(owner.boundaryID ? { boundaryID: owner.boundaryID } : {}),
      });
    run.addChild(owner, node);
    return true;
  }
  const node = run.asExitHandler(() =>
    executeTemplate(run, {
      name,
      displayName: `${owner.displayName}.onExit`,
      ...(owner.boundaryID ? { boundaryID: owner.boundaryID } : {}),
      ref: {
        ...(hook.template !== undefined ? { template: hook.template } : {}),
        ...(hook.templateRef ? { templateRef: hook.templateRef } : {}),
      },
      scope,
      args,
    }),
  );
  if (!node) return false;
  run.addChild(owner, node);
  return isFinal(node.phase);
}
