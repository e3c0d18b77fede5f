/**
 * Large node maps are stored compressed (`status.compressedNodes`: base64 of the gzipped JSON of
 * `status.nodes`, the peer's field and format), so a workflow of thousands of nodes fits the API
 * server's object size limit (about 10× smaller for a loop's nodes). Writers store with
 * `storedStatus`; every reader — the controller's informer, its own re-reads, the REST server,
 * the CLI's kubeconfig backend, the retry/resume/artifact operations — turns it back into
 * `nodes` with `inflateStatus`/`inflateWorkflow`, so nothing else ever sees the compressed form.
 *
 * Inflating is bounded (at most MAX_INFLATED_BYTES) and parses with parseUserJson, so a hostile
 * `compressedNodes` written by someone with status rights can neither exhaust memory nor reach
 * object prototypes.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseUserJson } from './user-json.js';
import { offloadedStoredForm } from './offloaded-nodes.js';
import type { NodeStatus, WorkflowStatus } from './workflow-status.js';

/** Nodes whose JSON is larger than this are stored compressed. */
export const COMPRESS_NODES_ABOVE = 256 * 1024;

/** Largest node map a reader inflates (a bigger one is refused, naming the workflow). */
export const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

/** `status` as it is written: nodes compressed when their JSON exceeds `above` bytes. */
export function storedStatus(status: WorkflowStatus, above = COMPRESS_NODES_ABOVE): WorkflowStatus {
  const known = stored.get(status);
  if (known?.above === above) return known.value;
  const { nodes, compressedNodes, ...rest } = status;
  // Without nodes (a status whose compressed nodes could not be read) the stored string stays.
  let value: WorkflowStatus = compressedNodes !== undefined && nodes === undefined ? { ...rest, compressedNodes } : rest;
  if (nodes !== undefined) {
    const json = JSON.stringify(nodes);
    value = Buffer.byteLength(json) <= above ? { ...rest, nodes } : { ...rest, compressedNodes: gzipSync(json).toString('base64') };
  }
  stored.set(status, { above, value });
  return value;
}

/** A status is measured and written in one reconcile: compress it once (statuses are not changed after). */
const stored = new WeakMap<WorkflowStatus, { above: number; value: WorkflowStatus }>();

/**
 * `status` with `nodes` restored from `compressedNodes` (the same object when it has none). With
 * `keepStored` the compressed string stays beside them, so `storedForm` knows exactly what is
 * stored (the controller diffs its next write against that).
 */
export function inflateStatus(status: WorkflowStatus, where = 'the workflow', keepStored = false): WorkflowStatus {
  if (typeof status.compressedNodes !== 'string') return status;
  const { compressedNodes, ...rest } = status;
  let json: string;
  try {
    json = gunzipSync(Buffer.from(compressedNodes, 'base64'), { maxOutputLength: MAX_INFLATED_BYTES }).toString('utf8');
  } catch (err) {
    throw new Error(`${where}: status.compressedNodes cannot be read: ${(err as Error).message}`);
  }
  const nodes = parseUserJson(json, `${where}: status.compressedNodes`);
  if (!nodes || typeof nodes !== 'object' || Array.isArray(nodes))
    throw new Error(`${where}: status.compressedNodes does not hold a map of nodes`);
  return { ...rest, nodes: nodes as Record<string, NodeStatus>, ...(keepStored ? { compressedNodes } : {}) };
}

/** What is stored of a status inflated with `keepStored`: without the nodes its compressed string holds. */
export function storedForm(status: WorkflowStatus): WorkflowStatus {
  const offloaded = offloadedStoredForm(status);
  if (offloaded) return offloaded;
  if (typeof status.compressedNodes !== 'string') return status;
  const { nodes, ...rest } = status;
  void nodes;
  return rest;
}

/** `wf` with its status inflated (the same object when there is nothing to inflate). */
export function inflateWorkflow<T extends { metadata?: { namespace?: string; name?: string }; status?: WorkflowStatus }>(
  wf: T,
  keepStored = false,
): T {
  if (typeof wf.status?.compressedNodes !== 'string' || wf.status.nodes !== undefined) return wf;
  return { ...wf, status: inflateStatus(wf.status, `workflow ${wf.metadata?.namespace ?? ''}/${wf.metadata?.name ?? ''}`, keepStored) };
}
