/**
 * Starting and advancing the node of one expanded call (a step, a DAG task, or one loop item of
 * them). Shared by the steps and DAG executors so both treat `when`, argument errors and
 * not-yet-startable calls the same way.
 */
import type { NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';
import type { ExpandedCall } from './call-expansion.js';
import { executeTemplate } from './execute-template.js';

/**
 * Creates the call's node: Skipped when `when` is false, Error when `when` or the arguments
 * could not be evaluated, otherwise the template's node. Undefined when it cannot start yet.
 */
export function startCall(run: EngineRun, call: ExpandedCall, boundaryID: string, scope: string | undefined): NodeStatus | undefined {
  if (!run.canStart()) return undefined;
  const prepared = call.prepare();
  const base = { name: call.name, displayName: call.displayName, boundaryID };
  if (prepared.kind === 'skip') return run.createNode({ ...base, type: 'Skipped', phase: 'Skipped', message: prepared.message });
  if (prepared.kind === 'error') return run.createNode({ ...base, type: 'Skipped', phase: 'Error', message: prepared.message });
  return executeTemplate(run, {
    ...base,
    ref: prepared.ref,
    scope,
    args: prepared.args,
    local: call.local,
    ...(prepared.absent ? { absent: prepared.absent } : {}),
  });
}

/** Advances the call's existing node (inputs were bound when it was created). */
export function advanceCall(
  run: EngineRun,
  call: ExpandedCall,
  existing: NodeStatus,
  boundaryID: string,
  scope: string | undefined,
): NodeStatus {
  if (isFinal(existing.phase)) return existing;
  return (
    executeTemplate(run, {
      name: call.name,
      displayName: call.displayName,
      boundaryID,
      ref: call.ref,
      scope,
      args: undefined,
      local: call.local,
    }) ?? existing
  );
}
