/**
 * resume: the waiting suspend nodes (all, or one) marked Succeeded in the status — the engine's
 * pure `resumeWorkflow` decides — and spec.suspend cleared. Status writes carry the
 * resourceVersion read, so a concurrent reconcile is a 409, retried with fresh state.
 */
import { inflateWorkflow, offloadedRefusal, type Workflow } from '../api/index.js';
import { ResumeError, resumeWorkflow, setSuspendedNodes } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import { OperationRefused, retryOnConflict } from './errors.js';
import { patchStatus } from './status-patch.js';

export interface ResumeRequest {
  /** Only the suspend node with this name or display name. */
  node?: string;
  /** Values of output parameters declared with `valueFrom.supplied`. */
  parameters?: Record<string, string>;
}

export interface Resumed {
  workflow: Workflow;
  /** Names of the nodes resumed. */
  nodes: string[];
}

export async function resumeRunningWorkflow(kube: KubeClient, namespace: string, name: string, req: ResumeRequest = {}): Promise<Resumed> {
  return retryOnConflict(async () => {
    const wf = inflateWorkflow(await kube.get<Workflow>(WORKFLOWS, namespace, name));
    const offloaded = offloadedRefusal(wf, 'resume');
    if (offloaded) throw new OperationRefused('precondition', offloaded);
    let next;
    try {
      next = resumeWorkflow(wf.status, { now: new Date().toISOString(), node: req.node, parameters: req.parameters });
    } catch (err) {
      if (err instanceof ResumeError) throw new OperationRefused('invalid', `Workflow ${namespace}/${name}: ${err.message}`);
      throw err;
    }
    if (next.resumed.length === 0 && !wf.spec?.suspend) {
      throw new OperationRefused(
        'precondition',
        `Workflow ${namespace}/${name}: nothing is waiting to be resumed${req.node ? ` (no waiting suspend step named "${req.node}")` : ''}`,
      );
    }
    // The resumed nodes and spec.suspend cleared in one write, carrying the resourceVersion read above.
    const along = wf.spec?.suspend ? { spec: { suspend: null } } : {};
    const stored = next.resumed.length > 0 || wf.spec?.suspend ? await patchStatus(kube, wf, next.status, along) : wf;
    return { workflow: inflateWorkflow(stored), nodes: next.resumed };
  });
}

export interface SetRequest {
  node?: string;
  phase?: string;
  message?: string;
  outputParameters?: Record<string, string>;
}

/**
 * `argo node set` (PUT …/set): output parameters, message and phase of the waiting suspend nodes
 * matched, decided by the engine's pure `setSuspendedNodes`, written in one conditional patch.
 */
export async function setSuspendedNode(kube: KubeClient, namespace: string, name: string, req: SetRequest): Promise<Workflow> {
  return retryOnConflict(async () => {
    const wf = inflateWorkflow(await kube.get<Workflow>(WORKFLOWS, namespace, name));
    const offloaded = offloadedRefusal(wf, 'set');
    if (offloaded) throw new OperationRefused('precondition', offloaded);
    let next;
    try {
      next = setSuspendedNodes(wf.status, { now: new Date().toISOString(), ...req });
    } catch (err) {
      if (err instanceof ResumeError) throw new OperationRefused('precondition', `Workflow ${namespace}/${name}: ${err.message}`);
      throw err;
    }
    return inflateWorkflow(await patchStatus(kube, wf, next.status));
  });
}
