/**
 * stop, terminate and suspend: changes of a running workflow's spec that the controller acts
 * on (spec.shutdown: Stop runs the exit handlers, Terminate does not; spec.suspend pauses
 * before the next step starts). Refused once the workflow has finished: there is nothing to
 * change and the patch would only look like it did something.
 */
import { FINAL_WORKFLOW_PHASES, inflateWorkflow, type Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import { OperationRefused, retryOnConflict } from './errors.js';

export type SpecOperation = 'stop' | 'terminate' | 'suspend';

const PATCH: Record<SpecOperation, Record<string, unknown>> = {
  stop: { spec: { shutdown: 'Stop' } },
  terminate: { spec: { shutdown: 'Terminate' } },
  suspend: { spec: { suspend: true } },
};

/** Applies the operation to Workflow `namespace/name` and returns the workflow as stored. */
export async function changeRunningWorkflow(kube: KubeClient, namespace: string, name: string, op: SpecOperation): Promise<Workflow> {
  // Checked and patched against one resourceVersion: a 409 reads again (retryOnConflict).
  return retryOnConflict(async () => {
    const wf = await kube.get<Workflow>(WORKFLOWS, namespace, name);
    const phase = wf.status?.phase;
    if (phase && FINAL_WORKFLOW_PHASES.includes(phase)) {
      throw new OperationRefused(
        'precondition',
        `Workflow ${namespace}/${name} has already finished (${phase}): there is nothing to ${op}`,
      );
    }
    return inflateWorkflow(
      await kube.mergePatch<Workflow>(WORKFLOWS, namespace, name, {
        ...PATCH[op],
        metadata: { resourceVersion: wf.metadata.resourceVersion },
      }),
    );
  });
}
