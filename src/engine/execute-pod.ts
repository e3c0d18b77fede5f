/**
 * Container and script templates: one pod per node.
 *
 * Life of a Pod node:
 *   created (Pending) → `createPod` is emitted, and emitted again on every reconcile until the pod
 *   is observed (the pod name is deterministic, so a repeat meets AlreadyExists);
 *   observed Pending/Running → the node follows the pod (`observed` is set);
 *   observed Succeeded → outputs are collected (missing `valueFrom.path` values fall back to the
 *   default, or the node fails); observed Failed → Failed with the pod's message;
 *   observed Deleted, or no longer observed after having been seen → Error "pod deleted";
 *   a deadline, timeout or workflow shutdown → Failed, and `deletePod`;
 *   a daemon (`template.daemon`) observed Running with its main container ready → `daemoned`,
 *   still Running, done for its siblings until its scope stops it (daemons.ts);
 *   a containerSet pod → also one child node per container (container-nodes.ts).
 */
import type { NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { renderPodSpecPatch } from './expressions.js';
import { newNode, type Execution } from './invocation.js';
import { leafLimitMessage, renderLeaf, succeedLeaf } from './leaf-render.js';
import { podNameFor } from './node-naming.js';
import { markDaemoned } from './daemons.js';
import { syncContainerNodes } from './container-nodes.js';
import { errorMessage } from '../log/error-message.js';

export function executePod(run: EngineRun, ex: Execution): NodeStatus | undefined {
  const node = executePodNode(run, ex);
  if (node && ex.resolved.template.containerSet) syncContainerNodes(run, node, ex.resolved.template, run.pods.get(node.id));
  return node;
}

function executePodNode(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart() || !run.podCapacity()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Pod', { phase: 'Pending' }));
    node.podName = podNameFor(run.workflowName, node.name, ex.resolved.templateName);
    run.activePods++;
  }
  const podName = node.podName ?? podNameFor(run.workflowName, node.name, ex.resolved.templateName);
  node.podName = podName;
  const leaf = renderLeaf(run, node, ex);
  if (!leaf.ok) return leaf.node;
  const { template } = leaf;
  let workflowPodSpecPatch: string | undefined;
  try {
    if (run.podSpecPatch !== undefined) workflowPodSpecPatch = renderPodSpecPatch(run.podSpecPatch, leaf.vars, 'spec.podSpecPatch');
  } catch (err) {
    return run.setPhase(node, 'Error', errorMessage(err));
  }
  const obs = run.pods.get(node.id);
  if (obs) node.observed = true;
  if (obs?.hostNodeName) node.hostNodeName = obs.hostNodeName;
  if (!obs || obs.phase === 'Pending' || obs.phase === 'Running') {
    if (!obs && node.observed) return run.setPhase(node, 'Error', 'pod deleted');
    const limit = leafLimitMessage(run, node, template, ex);
    if (limit !== undefined) {
      run.emit({ kind: 'deletePod', podName, reason: limit, nodeId: node.id });
      return run.setPhase(node, 'Failed', limit);
    }
    if (!obs) {
      run.emit({
        kind: 'createPod',
        nodeId: node.id,
        podName,
        template,
        nodeName: node.name,
        ...(workflowPodSpecPatch !== undefined ? { workflowPodSpecPatch } : {}),
      });
      return node;
    }
    run.setPhase(node, obs.phase === 'Running' ? 'Running' : 'Pending', obs.message ?? '');
    if (template.daemon === true && obs.phase === 'Running' && obs.ready) markDaemoned(run, node, obs.podIP);
    return node;
  }
  if (obs.phase === 'Deleted') return run.setPhase(node, 'Error', obs.message ? `pod deleted: ${obs.message}` : 'pod deleted');
  if (obs.outputs) node.outputs = { ...obs.outputs };
  if (obs.phase === 'Failed') {
    const exit = obs.outputs?.exitCode;
    return run.setPhase(node, 'Failed', obs.message ?? (exit !== undefined ? `Error (exit code ${exit})` : 'pod failed'));
  }
  return succeedLeaf(run, node, leaf, obs.outputs, ex, obs.message ?? '');
}
