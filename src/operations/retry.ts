/**
 * retry: runs a failed workflow's failed steps again (src/engine/retry-workflow.ts decides what).
 * Order matters, because the controller acts on each write:
 *   1. spec.shutdown / spec.suspend cleared — harmless while the status still says Failed (the
 *      engine does nothing with a finished workflow);
 *   2. the removed nodes' pods deleted, and gone — a new attempt reuses the pod name, and an old
 *      failed pod still there would be taken for the new attempt's result;
 *   3. the new status written with a fresh resourceVersion (retried on 409);
 *   4. the `completed` label removed (the controller only ever sets it, on a final phase).
 * The selector `id=<node id>` with restartSuccessful retries from that node (retry-from.ts).
 */
import { inflateWorkflow, LABEL_COMPLETED, offloadedRefusal, type Workflow, type WorkflowStatus } from '../api/index.js';
import { RetryError, retryWorkflow, type RetryOptions } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { PODS, WORKFLOWS } from '../kube/resource.js';
import { OperationRefused, retryOnConflict } from './errors.js';
import { markFrom, nodeIdSelector } from './retry-from.js';
import { patchStatus } from './status-patch.js';

export interface Retried {
  workflow: Workflow;
  /** Display names of the steps that run again. */
  rerun: string[];
}

const POD_GONE_TIMEOUT_MS = 60_000;

/**
 * What the engine plans from: with the selector `id=<node id>` (the peer UI's "retry from this
 * node"), the status with that node and all that follows it marked to run again (retry-from.ts);
 * other selectors are the engine's own (displayName=, name=, templateName=: the matching steps).
 */
export function planInput(subject: string, wf: Workflow, options: RetryOptions): [WorkflowStatus | undefined, RetryOptions] {
  const from = nodeIdSelector(options.selector);
  if (from === undefined) return [wf.status, options];
  if (!options.restartSuccessful)
    throw new OperationRefused('invalid', 'a node field selector needs --restart-successful (it picks Succeeded steps to run again)');
  const finished = wf.status?.phase === 'Failed' || wf.status?.phase === 'Error';
  // A workflow that cannot be retried is refused by the engine, saying why.
  return [finished ? markFrom(subject, wf.status, from) : wf.status, { ...options, restartSuccessful: false, selector: undefined }];
}

export async function retryFailedWorkflow(kube: KubeClient, namespace: string, name: string, options: RetryOptions = {}): Promise<Retried> {
  const wf = inflateWorkflow(await kube.get<Workflow>(WORKFLOWS, namespace, name));
  const offloaded = offloadedRefusal(wf, 'retry');
  if (offloaded) throw new OperationRefused('precondition', offloaded);
  let plan;
  try {
    plan = retryWorkflow(`${namespace}/${name}`, name, ...planInput(`Workflow ${namespace}/${name}`, wf, options));
  } catch (err) {
    if (err instanceof RetryError) throw new OperationRefused(err.reason, err.message);
    throw err;
  }
  // spec.shutdown / spec.suspend cleared against a fresh read (the controller may still be
  // writing the finished workflow's labels), retried on 409.
  const sameWorkflow = (current: Workflow) => {
    if (current.metadata.uid !== wf.metadata.uid)
      throw new OperationRefused('precondition', `Workflow ${namespace}/${name} was replaced while it was being retried`);
    return current;
  };
  await retryOnConflict(async (n) => {
    const current = sameWorkflow(n === 0 ? wf : await kube.get<Workflow>(WORKFLOWS, namespace, name));
    if (!current.spec.shutdown && !current.spec.suspend) return;
    await kube.mergePatch(WORKFLOWS, namespace, name, {
      metadata: { resourceVersion: current.metadata.resourceVersion },
      spec: { shutdown: null, suspend: null },
    });
  });
  for (const pod of plan.podsToDelete) {
    await kube.delete(PODS, namespace, pod, { gracePeriodSeconds: 0 }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
  const deadline = Date.now() + POD_GONE_TIMEOUT_MS;
  for (const pod of plan.podsToDelete) {
    for (;;) {
      const gone = await kube.get(PODS, namespace, pod).then(
        () => false,
        (err: unknown) => {
          if (isNotFound(err)) return true;
          throw err;
        },
      );
      if (gone) break;
      if (Date.now() > deadline) {
        throw new Error(
          `Workflow ${namespace}/${name}: pod ${pod} is still there after ${POD_GONE_TIMEOUT_MS / 1000}s; retry again once it is gone`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  // The status and the completed label in one write.
  const workflow = await retryOnConflict(async () => {
    const current = sameWorkflow(await kube.get<Workflow>(WORKFLOWS, namespace, name));
    return inflateWorkflow(await patchStatus(kube, current, plan.status, { labels: { [LABEL_COMPLETED]: null } }));
  });
  return { workflow, rerun: plan.rerun };
}
