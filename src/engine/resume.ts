/**
 * Resuming suspended work, as `plugflow resume` does it.
 *
 * A suspend node without `duration` waits until someone resumes it. Resuming is a pure change of
 * the workflow's status: every Running Suspend node (or only those matching `node`) becomes
 * Succeeded, with the output parameters it declared with `valueFrom.supplied` filled from the
 * given values or, failing that, their defaults. The CLI writes the returned status (status
 * subresource, with the resourceVersion it read, retrying on conflict) and also sets
 * `spec.suspend` to false when it was true. The controller's next reconcile sees finished nodes
 * and goes on; the engine itself never resumes anything.
 */
import { anyStringToString, type NodeStatus, type WorkflowStatus } from '../api/index.js';
import { checkEnum } from './inputs.js';

export interface ResumeOptions {
  /** Current time, ISO-8601 (finishedAt of the resumed nodes). */
  now: string;
  /** Only nodes whose name or display name equals this. Default: every waiting suspend node. */
  node?: string;
  /** Values for output parameters declared with `valueFrom.supplied`, by parameter name. */
  parameters?: Record<string, string>;
}

export class ResumeError extends Error {}

export interface ResumeResult {
  status: WorkflowStatus;
  /** Names of the nodes resumed (empty when nothing was waiting). */
  resumed: string[];
}

/** Returns a new status with the matching suspend nodes resumed; throws ResumeError on bad values. */
export function resumeWorkflow(status: WorkflowStatus | undefined, options: ResumeOptions): ResumeResult {
  const next: WorkflowStatus = structuredClone(status ?? {});
  const resumed: string[] = [];
  const nodes = Object.values(next.nodes ?? {})
    .filter((n) => n.type === 'Suspend' && (n.phase === 'Running' || n.phase === 'Pending'))
    .filter((n) => options.node === undefined || n.name === options.node || n.displayName === options.node)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const node of nodes) {
    fillSupplied(node, options.parameters ?? {});
    node.phase = 'Succeeded';
    node.finishedAt = options.now;
    node.message = 'resumed';
    resumed.push(node.name);
  }
  return { status: next, resumed };
}

function fillSupplied(node: NodeStatus, values: Record<string, string>): void {
  for (const p of node.outputs?.parameters ?? []) {
    if (p.value !== undefined) continue;
    const field = `node ${node.displayName} outputs.parameters[${p.name}]`;
    const given = values[p.name];
    const fallback = p.valueFrom?.default ?? p.default;
    if (given === undefined && fallback === undefined) {
      throw new ResumeError(`${field}: a value is required to resume (it has no default)`);
    }
    const value = given ?? anyStringToString(fallback!, field);
    const enumError = checkEnum(p, value, field);
    if (enumError) throw new ResumeError(enumError);
    p.value = value;
  }
}

/** Phases `set` may give a waiting suspend node (the peer's `argo node set --phase`). */
export const SET_PHASES = ['Succeeded', 'Failed', 'Error'] as const;

export interface SetOptions {
  now: string;
  /** Only nodes whose name or display name equals this. Default: every waiting suspend node. */
  node?: string;
  phase?: string;
  message?: string;
  /** Values of output parameters declared with `valueFrom.supplied`, by parameter name. */
  outputParameters?: Record<string, string>;
}

/**
 * `argo node set`: on the waiting suspend nodes matched, sets the given output parameters (only
 * those declared with `valueFrom.supplied` and not yet set), the message, and the phase — a node
 * set Succeeded has its other supplied parameters filled from their defaults, as a resume does.
 * Nothing matched, or nothing to set, is a ResumeError naming the selector.
 */
export function setSuspendedNodes(status: WorkflowStatus | undefined, options: SetOptions): { status: WorkflowStatus; set: string[] } {
  if (options.phase !== undefined && !(SET_PHASES as readonly string[]).includes(options.phase))
    throw new ResumeError(`phase: "${options.phase}" is not one of ${SET_PHASES.join(', ')}`);
  const given = options.outputParameters ?? {};
  if (options.phase === undefined && options.message === undefined && Object.keys(given).length === 0)
    throw new ResumeError('nothing to set: give a phase, a message or output parameters');
  const next: WorkflowStatus = structuredClone(status ?? {});
  const nodes = Object.values(next.nodes ?? {})
    .filter((n) => n.type === 'Suspend' && (n.phase === 'Running' || n.phase === 'Pending'))
    .filter((n) => options.node === undefined || n.name === options.node || n.displayName === options.node)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  if (nodes.length === 0)
    throw new ResumeError(
      `no waiting suspend node${options.node ? ` named "${options.node}"` : ''}: set only changes suspend nodes that wait`,
    );
  for (const node of nodes) {
    for (const [name, value] of Object.entries(given)) {
      const p = (node.outputs?.parameters ?? []).find((x) => x.name === name);
      const field = `node ${node.displayName} outputs.parameters[${name}]`;
      if (!p) throw new ResumeError(`${field}: the node declares no such output parameter`);
      if (!p.valueFrom?.supplied || p.value !== undefined)
        throw new ResumeError(`${field}: only a parameter with valueFrom.supplied that has no value yet can be set`);
      const enumError = checkEnum(p, value, field);
      if (enumError) throw new ResumeError(enumError);
      p.value = value;
    }
    if (options.message !== undefined) node.message = options.message;
    if (options.phase !== undefined) {
      if (options.phase === 'Succeeded') fillSupplied(node, {});
      node.phase = options.phase as NodeStatus['phase'];
      node.finishedAt = options.now;
    }
  }
  return { status: next, set: nodes.map((n) => n.name) };
}
