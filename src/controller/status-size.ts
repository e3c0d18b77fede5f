/**
 * A workflow whose status outgrows what the API server stores (issue 18 §4: a 9,000-item loop
 * made every status write fail with `ResourceExhausted (2725715 vs. 2097152)`, retried with
 * backoff forever, the workflow left without a phase) ends in Error at once instead.
 *
 * Before each status write the whole object is measured as it would be stored; above the
 * configured limit (default 1.5 MiB, safely under etcd's default 2 MiB request limit and the API
 * server's 3 MiB body limit) the status is replaced by an Error status naming the size and the
 * limit, and the round's actions are dropped (nothing new starts; the next reconcile of the
 * finished workflow cleans up its pods as for any other). A write the API server still refuses
 * as too large (a smaller limit configured there) is treated the same way, never retried as is.
 */
import {
  COMPRESS_NODES_ABOVE,
  FINAL_NODE_PHASES,
  FINAL_WORKFLOW_PHASES,
  storedStatus,
  type Workflow,
  type WorkflowStatus,
} from '../api/index.js';

/** Default largest serialized workflow (spec, metadata and status) the controller writes: 1.5 MiB. */
export const DEFAULT_MAX_STATUS_BYTES = 1536 * 1024;

/**
 * Bytes of `wf` serialized with `status` in place of its own, as it is written (large nodes
 * compressed above `compressAbove` bytes: compressed-nodes.ts) — what the API server would store.
 */
export function serializedSize(wf: Workflow, status: WorkflowStatus, compressAbove = COMPRESS_NODES_ABOVE): number {
  return Buffer.byteLength(JSON.stringify({ ...wf, status: storedStatus(status, compressAbove) }), 'utf8');
}

const n = (x: number) => x.toLocaleString('en-US');

/** The workflow message for a status of `size` bytes over `limit`. */
export function tooLargeMessage(size: number, limit: number, nodes: number): string {
  return (
    `the workflow's status is too large to store: ${n(size)} bytes serialized with ${n(nodes)} nodes, over the limit of ${n(limit)} bytes; ` +
    'it was stopped instead of being retried forever (split large loops into child workflows, or raise --max-status-bytes if the API server and etcd accept more)'
  );
}

/** The workflow message when the API server refused a status write as too large. */
export function refusedAsTooLargeMessage(size: number, nodes: number, serverSaid: string): string {
  return (
    `the workflow's status is too large to store: the API server refused ${n(size)} bytes serialized with ${n(nodes)} nodes (${serverSaid}); ` +
    'it was stopped instead of being retried forever (split large loops into child workflows)'
  );
}

/**
 * The Error status that replaces one too large to store. With `keepNodes` the nodes already
 * stored are kept (unfinished ones end in Error with a short message); without, the node list
 * is dropped — the last resort when even that does not fit.
 */
export function tooLargeStatus(previous: WorkflowStatus | undefined, message: string, now: string, keepNodes: boolean): WorkflowStatus {
  const nodes = keepNodes ? structuredClone(previous?.nodes ?? {}) : {};
  for (const node of Object.values(nodes)) {
    if (FINAL_NODE_PHASES.includes(node.phase)) continue;
    node.phase = 'Error';
    node.message = "stopped: the workflow's status is too large to store";
    node.finishedAt ??= now;
  }
  const out: WorkflowStatus = {
    ...(previous ?? {}),
    phase: 'Error',
    message,
    startedAt: previous?.startedAt ?? now,
    finishedAt: now,
    nodes,
  };
  delete out.progress;
  return out;
}

/**
 * The status to write for `status` computed for `wf`: itself when the workflow with it fits under
 * `limit` (measured as `written`, an offloaded summary, when given); otherwise, or when the API
 * server refused a write as too large, an Error status that fits (`over` says by how much).
 */
export function boundedStatus(
  wf: Workflow,
  status: WorkflowStatus,
  o: { limit: number; compressAbove?: number; refused?: { attempt: number; message: string }; written?: WorkflowStatus },
): { status: WorkflowStatus; over?: { bytes: number; limit: number; nodes: number } } {
  const now = new Date().toISOString();
  if (o.refused) return { status: tooLargeStatus(wf.status, o.refused.message, now, o.refused.attempt < 2) };
  if (FINAL_WORKFLOW_PHASES.includes(wf.status?.phase ?? '')) return { status }; // stored already: it fits
  const bytes = serializedSize(wf, o.written ?? status, o.compressAbove);
  if (bytes <= o.limit) return { status };
  const nodes = Object.keys(status.nodes ?? {}).length;
  const message = tooLargeMessage(bytes, o.limit, nodes);
  const kept = tooLargeStatus(wf.status, message, now, true);
  return {
    status: serializedSize(wf, kept, o.compressAbove) <= o.limit ? kept : tooLargeStatus(wf.status, message, now, false),
    over: { bytes, limit: o.limit, nodes },
  };
}
