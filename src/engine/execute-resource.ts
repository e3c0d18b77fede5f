/**
 * Resource templates: an action on a Kubernetes object, done by the controller (its resource
 * runner) with the rights of the step's service account — never a pod, never the controller's
 * own rights.
 *
 * Life of a Resource node:
 *   created (Pending) → `runResource` with the rendered template, emitted on every reconcile
 *   while the node runs (the runner starts it once and reports it);
 *   reported Running → Running; once the action is done the object it acted on is stored in
 *   `resourceObject`, and later `runResource` actions carry it as `resume` (a restarted
 *   controller then only waits, it does not act again);
 *   reported Succeeded → the declared outputs (jsonPath/jqFilter values the runner read, then the
 *   usual sources); reported Failed/Error → that phase with the runner's message;
 *   a node that was running and whose report is gone (the controller restarted) → asked for
 *   again, resumed from `resourceObject` when the action was done;
 *   deadline, timeout or workflow shutdown → Failed; the runner stops when it is no longer asked.
 */
import type { NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { newNode, type Execution } from './invocation.js';
import { leafLimitMessage, renderLeaf, succeedLeaf } from './leaf-render.js';

export function executeResource(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Resource', { phase: 'Pending' }));
  }
  const leaf = renderLeaf(run, node, ex);
  if (!leaf.ok) return leaf.node;
  const { template } = leaf;
  const obs = run.resources.get(node.id);
  if (obs?.object) node.resourceObject = obs.object;
  if (!obs || obs.phase === 'Running') {
    const limit = leafLimitMessage(run, node, template, ex);
    if (limit !== undefined) return run.setPhase(node, 'Failed', limit);
    run.emit({
      kind: 'runResource',
      nodeId: node.id,
      template,
      serviceAccountName: template.serviceAccountName || run.serviceAccountName || 'default',
      where: ex.where,
      ...(node.resourceObject ? { resume: node.resourceObject } : {}),
    });
    if (obs) run.setPhase(node, 'Running', obs.message ?? '');
    return node;
  }
  if (obs.phase !== 'Succeeded') return run.setPhase(node, obs.phase, obs.message || obs.phase);
  return succeedLeaf(run, node, leaf, obs.outputs, ex, obs.message ?? '');
}
