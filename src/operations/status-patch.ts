/**
 * An operation's change of a workflow's status (retry, resume), with whatever else it changes on
 * the workflow (a label, spec.suspend), as one merge patch on the main resource: the Workflow CRD
 * has no status subresource (docs/workflow-status.md). Conditional on the resourceVersion the
 * status was computed from: a concurrent reconcile makes it a 409, which the caller retries on
 * fresh state. Only what changed is sent; the caller's rights decide (`patch workflows`, and for
 * the status the admission policy's `update workflows/status`).
 */
import { storedForm, storedStatus, type Workflow, type WorkflowStatus } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { mergePatchDiff } from '../kube/merge-patch.js';
import { WORKFLOWS } from '../kube/resource.js';

export interface AlongWithStatus {
  /** Labels to set (null: remove). */
  labels?: Record<string, string | null>;
  /** Fields of the spec to set (null: remove), e.g. `{ suspend: null }`. */
  spec?: Record<string, unknown>;
}

export async function patchStatus(
  kube: KubeClient,
  current: Workflow,
  status: WorkflowStatus,
  along: AlongWithStatus = {},
): Promise<Workflow> {
  const md = current.metadata ?? {};
  const diff = mergePatchDiff(storedForm(current.status ?? {}) as Record<string, unknown>, storedStatus(status) as Record<string, unknown>);
  const patch = {
    metadata: { resourceVersion: md.resourceVersion, ...(along.labels ? { labels: along.labels } : {}) },
    ...(along.spec ? { spec: along.spec } : {}),
    ...(diff ? { status: diff } : {}),
  };
  return kube.mergePatch<Workflow>(WORKFLOWS, md.namespace, md.name!, patch);
}
