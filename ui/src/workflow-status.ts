/**
 * A workflow's progress and times as the views show them, also when the controller left them
 * out: the controller writes `status.progress` (pods, tasks and resources; `0/0` for a workflow
 * without them), but a workflow stored by an older controller may have none, so its steps are
 * counted here; and its times come from its nodes when its own are missing. Pure: tested beside.
 */
import type { NodeStatus, Workflow } from './types.js';

/** Nodes that only hold others: not steps of their own. */
const COMPOSITE = new Set(['Steps', 'DAG', 'StepGroup', 'TaskGroup', 'Retry', 'TaskSet']);
const DONE = new Set(['Succeeded']);
/** Steps that never ran: not counted. */
const NOT_RUN = new Set(['Skipped', 'Omitted']);

/** `done/total`: the controller's, else the steps of the nodes (Succeeded of those that ran or wait to). */
export function progressOf(wf: Workflow): string {
  const st = wf.status ?? {};
  if (st.progress) return st.progress;
  let done = 0;
  let total = 0;
  for (const n of Object.values(st.nodes ?? {})) {
    if (COMPOSITE.has(n.type) || NOT_RUN.has(n.phase) || NOT_RUN.has(n.type)) continue;
    total++;
    if (DONE.has(n.phase)) done++;
  }
  return total > 0 ? `${done}/${total}` : '';
}

const FINAL = new Set(['Succeeded', 'Failed', 'Error']);

/** When the workflow started and (once it has finished) ended: its own times, else its nodes'. */
export function timesOf(wf: Workflow): { startedAt?: string; finishedAt?: string } {
  const st = wf.status ?? {};
  const nodes: NodeStatus[] = Object.values(st.nodes ?? {});
  const startedAt = st.startedAt ?? earliest(nodes.map((n) => n.startedAt));
  let finishedAt = st.finishedAt;
  if (!finishedAt && FINAL.has(st.phase ?? '')) finishedAt = latest(nodes.map((n) => n.finishedAt)) ?? startedAt;
  return { startedAt, finishedAt };
}

function earliest(times: (string | undefined)[]): string | undefined {
  return times.filter((t): t is string => !!t).sort((a, b) => Date.parse(a) - Date.parse(b))[0];
}

function latest(times: (string | undefined)[]): string | undefined {
  return times
    .filter((t): t is string => !!t)
    .sort((a, b) => Date.parse(a) - Date.parse(b))
    .pop();
}
