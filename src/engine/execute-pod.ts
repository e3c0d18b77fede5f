/**
 * Container and script templates: one pod per node.
 *
 * Life of a Pod node:
 *   created (Pending) → the pod is made and followed while it runs, as follow-pod.ts says;
 *   observed Succeeded → outputs are collected (missing `valueFrom.path` values fall back to the
 *   default, or the node fails); observed Failed → Failed with the pod's message;
 *   observed Deleted → Error "pod deleted";
 *   a daemon (`template.daemon`) observed Running with its main container ready → `daemoned`,
 *   still Running, done for its siblings until its scope stops it (daemons.ts);
 *   a containerSet pod → also one child node per container (container-nodes.ts).
 */
import type { NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { newNode, type Execution } from './invocation.js';
import { renderLeaf, succeedLeaf } from './leaf-render.js';
import { podNameFor } from './node-naming.js';
import { markDaemoned } from './daemons.js';
import { syncContainerNodes } from './container-nodes.js';
import { followPod } from './follow-pod.js';

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
    node.podName = podNameFor(run.workflowName, run.hashKeyOf(node.name), ex.resolved.templateName);
    run.activePods++;
  }
  const podName = node.podName ?? podNameFor(run.workflowName, run.hashKeyOf(node.name), ex.resolved.templateName);
  node.podName = podName;
  const leaf = renderLeaf(run, node, ex);
  if (!leaf.ok) return leaf.node;
  const { template } = leaf;
  const observed = run.pods.get(node.id);
  if (observed?.hostNodeName) node.hostNodeName = observed.hostNodeName;
  const progress = followPod(run, node, ex, leaf, template);
  if ('node' in progress) {
    if (template.daemon === true && progress.node.phase === 'Running' && observed?.phase === 'Running' && observed.ready)
      markDaemoned(run, node, observed.podIP);
    return progress.node;
  }
  const obs = progress.ended;
  if (obs.phase === 'Deleted') return run.setPhase(node, 'Error', obs.message ? `pod deleted: ${obs.message}` : 'pod deleted');
  if (obs.outputs) node.outputs = { ...obs.outputs };
  if (obs.phase === 'Failed') {
    const exit = obs.outputs?.exitCode;
    return run.setPhase(node, 'Failed', obs.message ?? (exit !== undefined ? `Error (exit code ${exit})` : 'pod failed'));
  }
  return succeedLeaf(run, node, leaf, obs.outputs, ex, obs.message ?? '');
}
