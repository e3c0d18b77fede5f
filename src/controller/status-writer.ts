/**
 * Writes a workflow's status through the status subresource as a JSON merge patch of only what
 * changed, made conditional by carrying the resourceVersion it was computed from: a concurrent
 * writer makes it fail with 409 instead of being overwritten (the caller re-reads and re-runs
 * the engine on the fresh object). A status that changes nothing is not written at all. The diff
 * is taken between what is stored and what will be: compressed nodes are one string either way.
 */
import { COMPRESS_NODES_ABOVE, inflateWorkflow, storedForm, storedStatus, type Workflow, type WorkflowStatus } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { mergePatchDiff } from '../kube/merge-patch.js';
import type { KubeObject } from '../kube/object-store.js';
import { WORKFLOWS } from '../kube/resource.js';

type Obj<T> = T & KubeObject;

/**
 * The stored workflow after the write (its nodes inflated, compressed-nodes.ts), or undefined when
 * nothing needed writing. Large node maps are written compressed (above `compressAbove` bytes).
 */
export async function writeStatus(
  client: KubeClient,
  wf: Obj<Workflow>,
  status: WorkflowStatus,
  compressAbove = COMPRESS_NODES_ABOVE,
): Promise<Obj<Workflow> | undefined> {
  const before = storedForm(wf.status ?? {}) as Record<string, unknown>;
  const diff = mergePatchDiff(before, storedStatus(status, compressAbove) as Record<string, unknown>);
  if (!diff) return undefined;
  const patch = { metadata: { resourceVersion: wf.metadata.resourceVersion }, status: diff };
  return inflateWorkflow(
    await client.mergePatch<Obj<Workflow>>(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, patch, 'status'),
    true,
  );
}

/**
 * Labels that mirror the status, so `list` can select by phase on the server. Written on the
 * main resource (the status subresource ignores metadata), only when they differ. Not made
 * conditional: only this controller writes these keys, and a merge patch of them leaves every
 * other field alone, so a concurrent writer cannot be overwritten.
 */
export async function writePhaseLabels(
  client: KubeClient,
  wf: Obj<Workflow>,
  labels: Record<string, string>,
): Promise<Obj<Workflow> | undefined> {
  const current = wf.metadata.labels ?? {};
  const changed = Object.fromEntries(Object.entries(labels).filter(([k, v]) => current[k] !== v));
  if (Object.keys(changed).length === 0) return undefined;
  const patch = { metadata: { labels: changed } };
  return client.mergePatch<Obj<Workflow>>(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, patch);
}
