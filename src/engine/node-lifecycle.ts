/**
 * The lifecycle rule of nodes and workflows: a node result is never lost or reverted. A node that
 * is final in the stored status stays exactly as stored, and a finished workflow stays finished.
 * The engine applies it to every status it returns (reconcile.ts), and says what it had to put
 * back (`ReconcileResult.restored`): each such id is an engine bug, which the controller reports
 * (reconciler.ts asserts the rule held). Pure.
 */
import { FINAL_NODE_PHASES, FINAL_WORKFLOW_PHASES, jsonEqual, type NodeDelta, type WorkflowStatus } from '../api/index.js';

export interface GuardResult {
  status: WorkflowStatus;
  /** Ids of nodes whose stored final result was put back. */
  restored: string[];
}

export function keepFinishedResults(stored: WorkflowStatus | undefined, next: WorkflowStatus, delta?: NodeDelta): GuardResult {
  if (!stored) return { status: next, restored: [] };
  if (stored.phase && FINAL_WORKFLOW_PHASES.includes(stored.phase) && next.phase !== stored.phase) {
    return { status: stored, restored: ['(workflow)'] };
  }
  const restored: string[] = [];
  let nodes = next.nodes;
  const storedNodes = stored.nodes ?? {};
  // With the run's delta only its touched ids can hold another object than the stored one.
  const ids: Iterable<string> = delta !== undefined && delta.from === stored.nodes ? delta.touched : Object.keys(storedNodes);
  for (const id of ids) {
    const old = storedNodes[id];
    if (old === undefined) continue;
    const now = nodes?.[id];
    // The same object: a finished node the run shared and did not touch (most of a large workflow).
    if (now === old || !FINAL_NODE_PHASES.includes(old.phase)) continue;
    if (
      now &&
      now.phase === old.phase &&
      now.finishedAt === old.finishedAt &&
      (now.outputs === old.outputs || jsonEqual(now.outputs, old.outputs))
    )
      continue;
    if (nodes === next.nodes) nodes = { ...(next.nodes ?? {}) };
    // Keep links added since (children of a finished Steps/DAG node do not change, but be safe).
    nodes![id] = now?.children && !jsonEqual(now.children, old.children) ? { ...old, children: now.children } : old;
    restored.push(id);
  }
  return restored.length ? { status: { ...next, nodes }, restored } : { status: next, restored };
}
