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
 *
 * With `manifestFrom.artifact`, a pod comes first (the controller never fetches what a workflow
 * names: that would be a request from the controller's network position). The pod, under the
 * step's service account, fetches the input artifact as any step pod does and prints it
 * (`plugflow executor manifest`); its node follows the pod while it runs (follow-pod.ts, as a
 * step's pod, spec.podSpecPatch included), fails with it, and once it succeeded `runResource` carries the manifest it printed (FetchedManifest). After the
 * action is done (`resourceObject`), the pod is no longer looked at.
 */
import type { NodeStatus, Template } from '../api/index.js';
import type { FetchedManifest } from './contract.js';
import type { EngineRun } from './engine-run.js';
import { newNode, type Execution } from './invocation.js';
import { leafLimitMessage, renderLeaf, succeedLeaf, type RenderedLeaf } from './leaf-render.js';
import { podNameFor } from './node-naming.js';
import { followPod } from './follow-pod.js';

export function executeResource(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Resource', { phase: 'Pending' }));
  }
  // `pod.name` is the name the node's pod has or would have (the manifest pod's, which fetched
  // the manifest; without manifestFrom no pod runs, but the peer's step would have one by that name).
  const leaf = renderLeaf(run, node, ex, node.podName ?? podNameFor(run.workflowName, run.hashKeyOf(node.name), ex.resolved.templateName));
  if (!leaf.ok) return leaf.node;
  const { template } = leaf;
  const obs = run.resources.get(node.id);
  if (obs?.object) node.resourceObject = obs.object;
  let manifest: FetchedManifest | undefined;
  if (template.resource?.manifestFrom && !node.resourceObject && !obs) {
    const fetched = fetchManifest(run, node, leaf, ex);
    if ('node' in fetched) return fetched.node;
    manifest = fetched.manifest;
  }
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
      ...(manifest ? { manifest } : {}),
    });
    if (obs) run.setPhase(node, 'Running', obs.message ?? '');
    return node;
  }
  if (obs.phase !== 'Succeeded') return run.setPhase(node, obs.phase, obs.message || obs.phase);
  return succeedLeaf(run, node, leaf, obs.outputs, ex, obs.message ?? '');
}

/**
 * The manifest pod of a resource node: created, followed, and once it succeeded the manifest it
 * printed; `{ node }` while it is not there yet or when it failed.
 */
function fetchManifest(
  run: EngineRun,
  node: NodeStatus,
  leaf: Extract<RenderedLeaf, { ok: true }>,
  ex: Execution,
): { node: NodeStatus } | { manifest: FetchedManifest } {
  node.podName ??= podNameFor(run.workflowName, run.hashKeyOf(node.name), ex.resolved.templateName);
  const progress = followPod(
    run,
    node,
    ex,
    leaf,
    manifestPodTemplate(leaf.template),
    'the pod that fetched the manifest was deleted before the manifest was read',
  );
  if ('node' in progress) return progress;
  const pod = progress.ended;
  if (pod.phase === 'Deleted')
    return { node: run.setPhase(node, 'Error', `the pod fetching the manifest was deleted: ${pod.message ?? ''}`) };
  if (pod.phase === 'Failed') return { node: run.setPhase(node, 'Failed', `fetching the manifest: ${pod.message ?? 'the pod failed'}`) };
  const text = pod.outputs?.result ?? '';
  const whole = pod.resultTruncatedFrom === undefined;
  return {
    manifest: { podName: node.podName, text, whole, bytes: whole ? new TextEncoder().encode(text).length : pod.resultTruncatedFrom! },
  };
}

/**
 * What the manifest pod is built from: the step's service account and metadata, the one input
 * artifact `manifestFrom.artifact` names (bound and rendered as for any step), and the resource
 * section that tells the pod builder to run `plugflow executor manifest` on it. No outputs, no
 * log archiving: the pod only fetches.
 */
function manifestPodTemplate(t: Template): Template {
  const name = t.resource!.manifestFrom!.artifact.name;
  return {
    name: t.name,
    ...(t.serviceAccountName ? { serviceAccountName: t.serviceAccountName } : {}),
    ...(t.metadata ? { metadata: t.metadata } : {}),
    inputs: { artifacts: (t.inputs?.artifacts ?? []).filter((a) => a.name === name) },
    archiveLocation: { archiveLogs: false },
    resource: t.resource,
  };
}
