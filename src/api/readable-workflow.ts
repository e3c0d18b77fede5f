/**
 * How readers get a workflow's nodes, wherever they are stored: in the object, compressed in it
 * (compressed-nodes.ts), or offloaded to the archive's database (offloaded-nodes.ts).
 */
import { inflateWorkflow } from './compressed-nodes.js';
import { hydratedStatus, needsHydration, offloadedVersion } from './offloaded-nodes.js';
import type { Workflow } from './workflow.js';
import type { NodeStatus } from './workflow-status.js';

/** Where offloaded nodes are read from (the archive's database: src/archive/node-status-store.ts). */
export interface NodeStatusReader {
  /** A workflow's whole node set at `version`. */
  load(uid: string, version: number): Promise<Record<string, NodeStatus>>;
}

/**
 * `wf` as readers see it: compressed nodes inflated, offloaded nodes read back at the version the
 * object names. The one way the server reads a workflow's nodes; without a reader (no database)
 * an offloaded workflow keeps its summary and `offloadNodeStatusVersion` says so.
 */
export async function readableWorkflow<T extends Workflow>(wf: T, reader: NodeStatusReader | undefined): Promise<T> {
  const inflated = inflateWorkflow(wf);
  const version = offloadedVersion(inflated.status);
  const uid = inflated.metadata?.uid;
  if (version === undefined || !reader || !uid || !needsHydration(inflated.status)) return inflated;
  return { ...inflated, status: hydratedStatus(inflated.status!, await reader.load(uid, version)) };
}

/**
 * Why an operation that rewrites nodes cannot apply to `wf`: it is offloaded (its nodes are in the
 * archive's database, not in the object). Undefined when it can.
 */
export function offloadedRefusal(wf: Workflow, operation: string): string | undefined {
  if (offloadedVersion(wf.status) === undefined) return undefined;
  return (
    `Workflow ${wf.metadata?.namespace ?? ''}/${wf.metadata?.name ?? ''} keeps its nodes in the archive database ` +
    `(status.offloadNodeStatusVersion ${wf.status?.offloadNodeStatusVersion}): ${operation} of such a workflow is not supported; resubmit it instead`
  );
}
