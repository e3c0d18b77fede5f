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
