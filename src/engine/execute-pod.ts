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
 *   a deadline, timeout or workflow shutdown → Failed, and `deletePod`.
 */
import type { NodeStatus, Template } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { renderLeafTemplate, renderPodSpecPatch, valueSource } from './expressions.js';
import { newNode, templateVariables, type Execution } from './invocation.js';
import { leafLimitReached } from './leaf-deadline.js';
import { podNameFor } from './node-naming.js';
import { collectOutputs } from './outputs.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

export function executePod(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart() || !run.podCapacity()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Pod', { phase: 'Pending' }));
    node.podName = podNameFor(run.workflowName, node.name, ex.resolved.templateName);
    run.activePods++;
  }
  const podName = node.podName ?? podNameFor(run.workflowName, node.name, ex.resolved.templateName);
  node.podName = podName;
  const vars = leafVariables(run, node, ex);
  let template: Template;
  let workflowPodSpecPatch: string | undefined;
  try {
    template = renderLeafTemplate(ex.resolved.template, vars, ex.where, ex.seed.inputs);
    if (run.podSpecPatch !== undefined) workflowPodSpecPatch = renderPodSpecPatch(run.podSpecPatch, vars, 'spec.podSpecPatch');
  } catch (err) {
    return run.setPhase(node, 'Error', errorMessage(err));
  }
  const obs = run.pods.get(node.id);
  if (obs) node.observed = true;
  if (!obs || obs.phase === 'Pending' || obs.phase === 'Running') {
    if (!obs && node.observed) return run.setPhase(node, 'Error', 'pod deleted');
    let limit: string | undefined;
    try {
      limit = leafLimitReached(run, node, template, ex.timing, ex.where);
    } catch (err) {
      limit = errorMessage(err);
    }
    if (limit !== undefined) {
      run.emit({ kind: 'deletePod', podName, reason: limit, nodeId: node.id });
      return run.setPhase(node, 'Failed', limit);
    }
    if (!obs) {
      run.emit({ kind: 'createPod', nodeId: node.id, podName, template, nodeName: node.name, ...(workflowPodSpecPatch !== undefined ? { workflowPodSpecPatch } : {}) });
      return node;
    }
    run.setPhase(node, obs.phase === 'Running' ? 'Running' : 'Pending', obs.message ?? '');
    return node;
  }
  if (obs.phase === 'Deleted') return run.setPhase(node, 'Error', obs.message ? `pod deleted: ${obs.message}` : 'pod deleted');
  if (obs.outputs) node.outputs = { ...obs.outputs };
  if (obs.phase === 'Failed') {
    const exit = obs.outputs?.exitCode;
    return run.setPhase(node, 'Failed', obs.message ?? (exit !== undefined ? `Error (exit code ${exit})` : 'pod failed'));
  }
  const collected = collectOutputs(template.outputs, obs.outputs, valueSource(vars), ex.where);
  if (!collected.ok) return run.setPhase(node, 'Error', collected.error);
  node.outputs = collected.outputs;
  return run.setPhase(node, 'Succeeded', obs.message ?? '');
}

/** Variables of a leaf template: globals, inputs, `pod.name`, `node.name`, `retries`. */
export function leafVariables(run: EngineRun, node: NodeStatus, ex: Execution): Vars {
  const vars = templateVariables(run.globals, ex);
  vars['node.name'] = node.name;
  if (node.podName) vars['pod.name'] = node.podName;
  if (ex.retries !== undefined) vars.retries = String(ex.retries);
  return vars;
}
