/**
 * Actions on the workflows selected in the list: Stop, Terminate, Delete, Resubmit, Retry. Each
 * workflow is checked first as the single action checks it — the token's right in its namespace
 * (access.ts, the same operation) and its state — and one that fails the check is not sent but
 * reported with the reason; the others are sent one by one and reported ok or with the server's
 * reason. Pure: tested beside.
 */
import { refusal, type Operation } from './access.js';
import type { Access, Workflow } from './types.js';

export type BatchOp = Extract<Operation, 'stop' | 'terminate' | 'delete' | 'resubmit' | 'retry'>;

export interface BatchAction {
  id: BatchOp;
  label: string;
  /** Asked before anything is sent, with the number of workflows. */
  confirm?: (n: number) => string;
}

const them = (n: number) => (n === 1 ? '1 workflow' : `${n} workflows`);

export const BATCH_ACTIONS: BatchAction[] = [
  { id: 'stop', label: 'Stop', confirm: (n) => `Stop ${them(n)}? Running steps are stopped and no new steps start; exit handlers run.` },
  {
    id: 'terminate',
    label: 'Terminate',
    confirm: (n) => `Terminate ${them(n)}? Running steps are stopped and no new steps start; exit handlers do not run.`,
  },
  { id: 'delete', label: 'Delete', confirm: (n) => `Delete ${them(n)} and their pods?` },
  { id: 'resubmit', label: 'Resubmit' },
  { id: 'retry', label: 'Retry' },
];

const FINISHED = new Set(['Succeeded', 'Failed', 'Error']);

/** Why the workflow's state does not allow the action (the single actions' rule, from its phase). */
export function stateReason(op: BatchOp, wf: Workflow): string | undefined {
  const phase = wf.status?.phase ?? '';
  if ((op === 'stop' || op === 'terminate') && FINISHED.has(phase)) return 'it has finished';
  if (op === 'retry' && phase !== 'Failed' && phase !== 'Error') return 'only a Failed or Error workflow can be retried';
  return undefined;
}

export const keyOf = (wf: Workflow) => `${wf.metadata.namespace}/${wf.metadata.name}`;

export interface Planned {
  wf: Workflow;
  /** Not sent, and why. */
  skip?: string;
}

/** Each selected workflow with the reason it is not sent, if any; `access` by namespace (missing: not known yet, so not refused). */
export function planBatch(op: BatchOp, selected: Workflow[], access: ReadonlyMap<string, Record<string, Access>>): Planned[] {
  return selected.map((wf) => {
    const skip = refusal(access.get(wf.metadata.namespace) ?? {}, op, stateReason(op, wf));
    return skip ? { wf, skip } : { wf };
  });
}

/** Why the action's button is disabled: nothing selected, or not one of them can be sent (the first reason). */
export function batchRefusal(plans: Planned[]): string | undefined {
  if (plans.length === 0) return 'nothing is selected';
  if (plans.some((p) => !p.skip)) return undefined;
  const reasons = new Set(plans.map((p) => p.skip));
  return reasons.size === 1 ? plans[0]!.skip : `not possible for any of the selected: ${plans[0]!.skip} (${keyOf(plans[0]!.wf)}), …`;
}

/** The REST call of the action on one workflow. */
export function requestOf(op: BatchOp, wf: Workflow): { method: 'PUT' | 'DELETE'; path: string } {
  const base = `/api/v1/workflows/${encodeURIComponent(wf.metadata.namespace)}/${encodeURIComponent(wf.metadata.name)}`;
  return op === 'delete' ? { method: 'DELETE', path: base } : { method: 'PUT', path: `${base}/${op}` };
}
