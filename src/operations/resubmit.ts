/**
 * resubmit: creates the workflow `resubmittedWorkflow` (src/engine/resubmit.ts) makes from an
 * existing one, with the rights of whoever asks (the CLI's kubeconfig, the REST caller's token).
 *
 * Memoized, the new workflow must start from the old one's kept nodes, and a status can only be
 * written after the object exists (status subresource). So: created with `spec.suspend: true`
 * (the controller starts nothing), its status written from `memoizedStatus`, then unsuspended.
 * Should the last step fail, the error says so and `plugflow resume` finishes the job.
 */
import { inflateWorkflow, type Workflow } from '../api/index.js';
import { memoizedStatus, ResubmitError, resubmittedWorkflow } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import { withCreator } from './creator.js';
import { OperationRefused, retryOnConflict } from './errors.js';
import { patchStatus } from './status-patch.js';

export interface ResubmitRequest {
  parameters?: Record<string, string>;
  /** The peer's `--memoized`: reuse the old run's successful steps. */
  memoized?: boolean;
  /** Who resubmits (creator.ts); the old workflow's creator is not carried over. */
  creator?: string;
}

export async function resubmitWorkflow(kube: KubeClient, namespace: string, name: string, req: ResubmitRequest = {}): Promise<Workflow> {
  return resubmitFrom(kube, inflateWorkflow(await kube.get<Workflow>(WORKFLOWS, namespace, name)), req);
}

/** The same, from a workflow in hand (an archived one): created in its namespace, with `kube`'s rights. */
export async function resubmitFrom(kube: KubeClient, old: Workflow, req: ResubmitRequest = {}): Promise<Workflow> {
  const namespace = old.metadata!.namespace!;
  const name = old.metadata!.name!;
  if (req.memoized && Object.keys(req.parameters ?? {}).length > 0) {
    throw new OperationRefused(
      'invalid',
      "a memoized resubmit keeps the old run's results, which were computed from its arguments: resubmit without --memoized to change them",
    );
  }
  let wf: Workflow;
  try {
    wf = resubmittedWorkflow(old, { parameters: req.parameters });
    wf.metadata = withCreator(wf.metadata, req.creator);
    if (req.memoized) memoizedStatus(old, `${name}-x`); // refused before anything is created
  } catch (err) {
    if (err instanceof ResubmitError) throw new OperationRefused(err.reason, err.message);
    throw err;
  }
  if (!req.memoized) return kube.create<Workflow>(WORKFLOWS, namespace, wf);
  const created = await kube.create<Workflow>(WORKFLOWS, namespace, { ...wf, spec: { ...wf.spec, suspend: true } });
  const newName = created.metadata.name!;
  const status = memoizedStatus(old, newName);
  try {
    // The old run's results and the suspension lifted, in one write.
    return await retryOnConflict(async (n) => {
      const current = n === 0 ? created : await kube.get<Workflow>(WORKFLOWS, namespace, newName);
      const startedAt = current.status?.startedAt ?? new Date().toISOString();
      return patchStatus(kube, current, { ...status, startedAt }, { spec: { suspend: null } });
    });
  } catch (err) {
    throw new Error(
      `Workflow ${namespace}/${newName} was created suspended but could not be given the old run's results (${err instanceof Error ? err.message : String(err)}); delete it, or run it with \`plugflow resume ${newName}\``,
    );
  }
}
