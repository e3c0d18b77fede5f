/**
 * The pod of a leaf node while it has not ended — the one life every node that runs a pod shares
 * (container, script, containerSet and data steps in execute-pod.ts; the manifest pod of a
 * resource step in execute-resource.ts):
 *
 *   not observed yet → `createPod` (with spec.podSpecPatch rendered for it), emitted on every
 *   reconcile until the pod is seen (its name is deterministic, so a repeat meets AlreadyExists);
 *   Pending/Running → the node follows it, with the pod's message;
 *   a deadline or timeout → `deletePod`, and the node Failed;
 *   no longer observed after having been seen → Error (`gone`).
 *
 * Once the pod has ended (Succeeded, Failed, Deleted) its observation is returned for the caller
 * to take the result from.
 */
import type { NodeStatus, Template } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';
import type { PodObservation } from './contract.js';
import type { EngineRun } from './engine-run.js';
import { renderPodSpecPatch } from './expressions.js';
import type { Execution } from './invocation.js';
import { leafLimitMessage, type RenderedLeaf } from './leaf-render.js';

export type PodProgress = { node: NodeStatus } | { ended: PodObservation };

export function followPod(
  run: EngineRun,
  node: NodeStatus,
  ex: Execution,
  leaf: Extract<RenderedLeaf, { ok: true }>,
  podTemplate: Template,
  gone = 'pod deleted',
): PodProgress {
  const podName = node.podName!;
  const obs = run.pods.get(node.id);
  if (obs) node.observed = true;
  if (obs && obs.phase !== 'Pending' && obs.phase !== 'Running') return { ended: obs };
  if (!obs && node.observed) return { node: run.setPhase(node, 'Error', gone) };
  const limit = leafLimitMessage(run, node, leaf.template, ex);
  if (limit !== undefined) {
    run.emit({ kind: 'deletePod', podName, reason: limit, nodeId: node.id });
    return { node: run.setPhase(node, 'Failed', limit) };
  }
  if (obs) return { node: run.setPhase(node, obs.phase === 'Running' ? 'Running' : 'Pending', obs.message ?? '') };
  let workflowPodSpecPatch: string | undefined;
  try {
    if (run.podSpecPatch !== undefined) workflowPodSpecPatch = renderPodSpecPatch(run.podSpecPatch, leaf.vars, 'spec.podSpecPatch');
  } catch (err) {
    return { node: run.setPhase(node, 'Error', errorMessage(err)) };
  }
  run.emit({
    kind: 'createPod',
    nodeId: node.id,
    podName,
    template: podTemplate,
    nodeName: node.name,
    ...(workflowPodSpecPatch !== undefined ? { workflowPodSpecPatch } : {}),
  });
  return { node };
}
