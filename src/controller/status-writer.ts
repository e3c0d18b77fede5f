/**
 * Writes a workflow's status, and the metadata that goes with it, in one request: a JSON merge
 * patch of only what changed, on the main resource (the Workflow CRD has no status subresource:
 * docs/workflow-status.md), made conditional by carrying the resourceVersion it was computed
 * from, so a concurrent writer makes it fail with 409 instead of being overwritten (the caller
 * re-reads and re-runs the engine on the fresh object).
 *
 * The labels that mirror the status (phase, completed) and the finalizers a feature needs from
 * the first status on travel in the same patch: no write changes only labels, and a change of the
 * workflow costs the API server one write, as the peer's single PUT does. Nothing is written when
 * nothing differs. The diff is taken between what is stored and what will be: compressed nodes
 * are one string either way.
 */
import { COMPRESS_NODES_ABOVE, inflateWorkflow, storedForm, storedStatus, type Workflow, type WorkflowStatus } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { mergePatchDiff } from '../kube/merge-patch.js';
import type { KubeObject } from '../kube/object-store.js';
import { WORKFLOWS } from '../kube/resource.js';

type Obj<T> = T & KubeObject;

/** Metadata to carry with a status: labels to set, finalizers to add (each only when missing). */
export interface StatusMetadata {
  labels?: Record<string, string>;
  finalizers?: readonly string[];
}

/**
 * The stored workflow after the write (its nodes inflated, compressed-nodes.ts), or undefined when
 * nothing needed writing. Large node maps are written compressed (above `compressAbove` bytes).
 */
export async function writeStatus(
  client: KubeClient,
  wf: Obj<Workflow>,
  status: WorkflowStatus,
  compressAbove = COMPRESS_NODES_ABOVE,
  meta: StatusMetadata = {},
): Promise<Obj<Workflow> | undefined> {
  const before = storedForm(wf.status ?? {}) as Record<string, unknown>;
  const diff = mergePatchDiff(before, storedStatus(status, compressAbove) as Record<string, unknown>);
  const labels = changedLabels(wf, meta.labels);
  const finalizers = withFinalizers(wf, meta.finalizers);
  if (!diff && !labels && !finalizers) return undefined;
  const patch = {
    metadata: { resourceVersion: wf.metadata.resourceVersion, ...(labels ? { labels } : {}), ...(finalizers ? { finalizers } : {}) },
    ...(diff ? { status: diff } : {}),
  };
  return inflateWorkflow(await client.mergePatch<Obj<Workflow>>(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, patch), true);
}

/** The labels of `wanted` that differ from the workflow's, or undefined when none do. */
function changedLabels(wf: Obj<Workflow>, wanted: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!wanted) return undefined;
  const current = wf.metadata.labels ?? {};
  const changed = Object.fromEntries(Object.entries(wanted).filter(([k, v]) => current[k] !== v));
  return Object.keys(changed).length > 0 ? changed : undefined;
}

/** The whole finalizer list with the missing ones of `wanted` added (a merge patch replaces a list), or undefined. */
function withFinalizers(wf: Obj<Workflow>, wanted: readonly string[] | undefined): string[] | undefined {
  const current = wf.metadata.finalizers ?? [];
  const missing = (wanted ?? []).filter((f) => !current.includes(f));
  return missing.length > 0 && !wf.metadata.deletionTimestamp ? [...current, ...missing] : undefined;
}
