/**
 * archive retry: runs an archived failed workflow again from where it failed, as `retry` does for
 * a live one (src/engine/retry-workflow.ts decides what runs again), with the rights of whoever
 * asks. The live object is gone (that is why it is only in the archive), so it is created again
 * under its name and namespace, its labels and annotations without the controller's bookkeeping
 * (phase, completed, archiving status).
 *
 * The Workflow CRD has no status subresource (docs/workflow-status.md), so it is created with the
 * retry's status in one write: the controller's first look already sees what runs again. The
 * admission policy lets only accounts that may update workflows/status do so, the right a retry
 * asks for.
 */
import { LABEL_COMPLETED, LABEL_PHASE, LABEL_PREFIX, storedStatus, type Workflow } from '../api/index.js';
import { RetryError, retryWorkflow, type RetryOptions } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists } from '../kube/errors.js';
import { WORKFLOWS } from '../kube/resource.js';
import { withCreator } from './creator.js';
import { OperationRefused } from './errors.js';
import { planInput, type Retried } from './retry.js';

/** Labels the controller keeps (or the archive added): not carried to the new object. */
const BOOKKEEPING = new Set([LABEL_PHASE, LABEL_COMPLETED, `${LABEL_PREFIX}workflow-archiving-status`]);

export async function retryArchivedWorkflow(
  kube: KubeClient,
  archived: Workflow,
  options: RetryOptions & { creator?: string } = {},
): Promise<Retried> {
  const namespace = archived.metadata!.namespace!;
  const name = archived.metadata!.name!;
  const subject = `archived Workflow ${namespace}/${name} (uid ${archived.metadata?.uid ?? ''})`;
  let plan;
  try {
    plan = retryWorkflow(`${namespace}/${name}`, name, ...planInput(subject, archived, options));
  } catch (err) {
    if (err instanceof RetryError) throw new OperationRefused(err.reason, err.message);
    throw err;
  }
  const md = archived.metadata ?? {};
  const labels = Object.fromEntries(Object.entries(md.labels ?? {}).filter(([k]) => !BOOKKEEPING.has(k)));
  const fresh: Workflow = {
    apiVersion: archived.apiVersion ?? 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: withCreator(
      { name, namespace, labels: { ...labels, [`${LABEL_PREFIX}retried-from-archive`]: md.uid ?? '' }, annotations: md.annotations ?? {} },
      options.creator,
    ),
    spec: archived.spec!,
    status: storedStatus(plan.status),
  };
  try {
    return { workflow: await kube.create<Workflow>(WORKFLOWS, namespace, fresh), rerun: plan.rerun };
  } catch (err) {
    if (isAlreadyExists(err))
      throw new OperationRefused(
        'precondition',
        `Workflow ${namespace}/${name} exists again: retry it with \`plugflow retry ${name}\`, or delete it first to retry the archived run`,
      );
    throw err;
  }
}
