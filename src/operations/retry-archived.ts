/**
 * archive retry: runs an archived failed workflow again from where it failed, as `retry` does for
 * a live one (src/engine/retry-workflow.ts decides what runs again), with the rights of whoever
 * asks. The live object is gone (that is why it is only in the archive), so it is created again
 * under its name and namespace, its labels and annotations without the controller's bookkeeping
 * (phase, completed, archiving status).
 *
 * Its status can only be written once the object exists (status subresource), so the order is
 * that of a memoized resubmit: created with `spec.suspend: true` (the controller starts nothing),
 * the retry's status written, then unsuspended (unless the workflow was suspended itself).
 */
import { LABEL_COMPLETED, LABEL_PHASE, LABEL_PREFIX, storedStatus, type Workflow } from '../api/index.js';
import { RetryError, retryWorkflow, type RetryOptions } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists } from '../kube/errors.js';
import { WORKFLOWS } from '../kube/resource.js';
import { withCreator } from './creator.js';
import { OperationRefused, retryOnConflict } from './errors.js';
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
    spec: { ...archived.spec!, suspend: true },
  };
  let created: Workflow;
  try {
    created = await kube.create<Workflow>(WORKFLOWS, namespace, fresh);
  } catch (err) {
    if (isAlreadyExists(err))
      throw new OperationRefused(
        'precondition',
        `Workflow ${namespace}/${name} exists again: retry it with \`plugflow retry ${name}\`, or delete it first to retry the archived run`,
      );
    throw err;
  }
  try {
    await retryOnConflict(async (n) => {
      const current = n === 0 ? created : await kube.get<Workflow>(WORKFLOWS, namespace, name);
      await kube.replace<Workflow>(WORKFLOWS, namespace, name, { ...current, status: storedStatus(plan.status) }, 'status');
    });
    const workflow = archived.spec?.suspend
      ? await kube.get<Workflow>(WORKFLOWS, namespace, name)
      : await kube.mergePatch<Workflow>(WORKFLOWS, namespace, name, { spec: { suspend: null } });
    return { workflow, rerun: plan.rerun };
  } catch (err) {
    throw new Error(
      `Workflow ${namespace}/${name} was created suspended but could not be given the archived run's results (${err instanceof Error ? err.message : String(err)}); delete it and retry again`,
    );
  }
}
