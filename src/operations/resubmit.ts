/**
 * resubmit: creates the workflow `resubmittedWorkflow` (src/engine/resubmit.ts) makes from an
 * existing one, with the rights of whoever asks (the CLI's kubeconfig, the REST caller's token).
 */
import type { Workflow } from '../api/index.js';
import { ResubmitError, resubmittedWorkflow } from '../engine/resubmit.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import { OperationRefused } from './errors.js';

export interface ResubmitRequest {
  parameters?: Record<string, string>;
  /** The peer's `--memoized`: reuse the old run's successful steps. */
  memoized?: boolean;
}

export async function resubmitWorkflow(kube: KubeClient, namespace: string, name: string, req: ResubmitRequest = {}): Promise<Workflow> {
  if (req.memoized) {
    throw new OperationRefused(
      'invalid',
      "memoized resubmit is not available yet (it would carry the old run's succeeded nodes into the new workflow): use retry to re-run only what failed, or memoize on the templates",
    );
  }
  const old = await kube.get<Workflow>(WORKFLOWS, namespace, name);
  let wf: Workflow;
  try {
    wf = resubmittedWorkflow(old, { parameters: req.parameters });
  } catch (err) {
    if (err instanceof ResubmitError) throw new OperationRefused('invalid', err.message);
    throw err;
  }
  return kube.create<Workflow>(WORKFLOWS, namespace, wf);
}
