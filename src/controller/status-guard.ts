/**
 * The last line of defence of "a node result is never lost or reverted": whatever the engine
 * returns, a node that is final in the stored status stays exactly as stored, and a finished
 * workflow stays finished. The engine already guarantees this; the guard makes it hold even if
 * a future engine change or a stale input slips, and reports what it restored so that is
 * logged. Pure.
 */
import { FINAL_NODE_PHASES, FINAL_WORKFLOW_PHASES, type WorkflowStatus } from '../api/index.js';
import { jsonEqual } from '../kube/merge-patch.js';

export interface GuardResult {
  status: WorkflowStatus;
  /** Ids of nodes whose stored final result was put back. */
  restored: string[];
}

export function keepFinishedResults(stored: WorkflowStatus | undefined, next: WorkflowStatus): GuardResult {
  if (!stored) return { status: next, restored: [] };
  if (stored.phase && FINAL_WORKFLOW_PHASES.includes(stored.phase) && next.phase !== stored.phase) {
    return { status: stored, restored: ['(workflow)'] };
  }
  const restored: string[] = [];
  let nodes = next.nodes;
  for (const [id, old] of Object.entries(stored.nodes ?? {})) {
    if (!FINAL_NODE_PHASES.includes(old.phase)) continue;
    const now = nodes?.[id];
    if (now && now.phase === old.phase && now.finishedAt === old.finishedAt && jsonEqual(now.outputs, old.outputs)) continue;
    if (nodes === next.nodes) nodes = { ...(next.nodes ?? {}) };
    // Keep links added since (children of a finished Steps/DAG node do not change, but be safe).
    nodes![id] = now?.children && !jsonEqual(now.children, old.children) ? { ...old, children: now.children } : old;
    restored.push(id);
  }
  return restored.length ? { status: { ...next, nodes }, restored } : { status: next, restored };
}
