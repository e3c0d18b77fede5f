/**
 * The world as the engine sees it (src/engine/contract.ts Observations), built from the caches
 * for one workflow. Pure given its inputs:
 *
 * - only pods and the TaskSet *owned by this workflow's uid* count — a workflow deleted and
 *   created again under the same name must not inherit its predecessor's pods;
 * - step pods become PodObservations (src/pods' observePod); a pod the controller could not
 *   create for a permanent reason (invalid spec, admission refused) is reported as a Failed pod
 *   with that reason, so the node ends instead of retrying forever;
 * - the agent pod becomes the AgentObservation; an agent pod that could not be built or created
 *   is reported Failed with the reason (every unfinished plugin/http node then ends in Error);
 * - TaskSet `status.nodes` become TaskObservations;
 * - the (Cluster)WorkflowTemplates the workflow refers to, transitively.
 */
import { AGENT_CONTAINER } from '../plugins/index.js';
import { LABEL_COMPONENT, type ClusterWorkflowTemplate, type Workflow, type WorkflowTaskSet, type WorkflowTemplate } from '../api/index.js';
import {
  memoCacheNames,
  resolveTemplateSources,
  type AgentObservation,
  parameterConfigMapNames,
  type Observations,
  type PodObservation,
  type SourceLookup,
  type TaskObservation,
  type TemplateSource,
} from '../engine/index.js';
import type { KubeObject } from '../kube/object-store.js';
import { AGENT_COMPONENT } from '../plugins/index.js';
import { observePod } from '../pods/observe-pod.js';
import type { CachedPod } from './caches.js';

export interface ObservationInputs {
  workflow: Workflow;
  pods: CachedPod[];
  taskSet?: WorkflowTaskSet & KubeObject;
  /** Pods this controller failed to create for good: pod name → reason. */
  podCreateFailures?: ReadonlyMap<string, { nodeId: string; message: string }>;
  /** Why the agent pod could not be built or created, if it could not. */
  agentFailure?: string;
  /** Why a node is lost (lost-nodes.ts), or undefined while it is fine. */
  lostNode?: (node: string | undefined) => string | undefined;
  workflowTemplate(namespace: string, name: string): WorkflowTemplate | undefined;
  clusterWorkflowTemplate(name: string): ClusterWorkflowTemplate | undefined;
  now: Date;
  pluginsEnabled: boolean;
  /** Observations.workflowLevelPluginsEnabled (the WORKFLOW_LEVEL_EXECUTOR_PLUGINS gate). */
  workflowLevelPluginsEnabled?: boolean;
  /** Observations.artifactDrivers (the registered artifact drivers' names). */
  artifactDrivers?: string[];
  /** Observations.maxLoopItems (the controller's --max-loop-items). */
  maxLoopItems?: number;
}

export function ownedBy(obj: KubeObject & { metadata?: { ownerReferences?: { uid?: string }[] } }, uid: string | undefined): boolean {
  return !!uid && (obj.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
}

export function isAgentPod(pod: CachedPod): boolean {
  return pod.metadata?.labels?.[LABEL_COMPONENT] === AGENT_COMPONENT;
}

export function buildObservations(inputs: ObservationInputs): Observations {
  const uid = inputs.workflow.metadata.uid;
  const pods: PodObservation[] = [];
  let agent: AgentObservation | undefined;
  const seenPods = new Set<string>();
  for (const pod of inputs.pods) {
    if (!ownedBy(pod, uid)) continue;
    if (isAgentPod(pod)) {
      agent = observeAgent(pod);
      continue;
    }
    seenPods.add(pod.metadata?.name ?? '');
    const observed = observePod(pod);
    // A pod on a lost node (lost-nodes.ts) will never report again: its step ends, naming the node.
    const lost = inputs.lostNode?.(pod.spec?.nodeName);
    pods.push(
      lost && (observed.phase === 'Pending' || observed.phase === 'Running')
        ? { ...observed, phase: 'Deleted', message: `its node was lost: ${lost}` }
        : observed,
    );
  }
  for (const [podName, f] of inputs.podCreateFailures ?? []) {
    if (!seenPods.has(podName)) pods.push({ podName, nodeId: f.nodeId, phase: 'Failed', message: f.message });
  }
  // A recorded failure is final (the pod cannot be built or is refused): it wins over a failed
  // pod the engine would otherwise replace.
  if (inputs.agentFailure) agent = { phase: 'Failed', message: inputs.agentFailure };

  const tasks: TaskObservation[] = [];
  if (inputs.taskSet && ownedBy(inputs.taskSet, uid)) {
    for (const [nodeId, r] of Object.entries(inputs.taskSet.status?.nodes ?? {})) {
      if (!r?.phase) continue;
      const t: TaskObservation = { nodeId, phase: r.phase };
      if (r.message !== undefined) t.message = r.message;
      if (r.outputs !== undefined) t.outputs = r.outputs;
      if (r.progress !== undefined) t.progress = r.progress;
      tasks.push(t);
    }
  }

  const templates = collectTemplateSources(inputs);
  const obs: Observations = { pods, tasks, now: inputs.now.toISOString(), pluginsEnabled: inputs.pluginsEnabled };
  if (inputs.workflowLevelPluginsEnabled) obs.workflowLevelPluginsEnabled = true;
  if (inputs.artifactDrivers) obs.artifactDrivers = inputs.artifactDrivers;
  if (inputs.maxLoopItems !== undefined) obs.maxLoopItems = inputs.maxLoopItems;
  if (Object.keys(templates).length > 0) obs.templates = templates;
  if (agent) obs.agent = agent;
  return obs;
}

/**
 * The ConfigMaps the workflow names (its own templates and its WorkflowTemplates'): memoize
 * caches and configMapKeyRef parameter maps, from one walk of its template sources.
 */
/** The parameter ConfigMaps the workflow and the templates it refers to name. */
export function parameterNames(wf: Workflow, sources: Record<string, TemplateSource>): string[] {
  const fromTemplates = Object.values(sources);
  return parameterConfigMapNames(
    {
      arguments: {
        parameters: [...(wf.spec?.arguments?.parameters ?? []), ...fromTemplates.flatMap((s) => s.arguments?.parameters ?? [])],
      },
    },
    [...(wf.spec?.templates ?? []), ...fromTemplates.flatMap((s) => s.templates)],
  );
}

/** The memoize caches the workflow's templates and the templates it refers to name. */
export function cacheNames(wf: Workflow, sources: Record<string, TemplateSource>): string[] {
  return memoCacheNames([...(wf.spec?.templates ?? []), ...Object.values(sources).flatMap((s) => s.templates)]);
}

/**
 * The agent pod's state: Failed with the reason its containers give. A failed or deleted agent
 * pod can be replaced, hence `replacing`; whether it is, is the engine's decision
 * (src/engine/agent-replacement.ts, counting each failed pod once by `podUID`).
 */
export function observeAgent(pod: CachedPod): AgentObservation {
  const state = agentState(pod);
  if (state.phase !== 'Failed') return state;
  const { name, uid } = pod.metadata ?? {};
  return { ...state, ...(name ? { podName: name } : {}), ...(uid ? { podUID: uid } : {}) };
}

function agentState(pod: CachedPod): AgentObservation {
  const status = pod.status ?? {};
  const phase = status.phase === 'Running' || status.phase === 'Succeeded' || status.phase === 'Failed' ? status.phase : 'Pending';
  if (phase !== 'Failed') {
    if (pod.metadata?.deletionTimestamp)
      return { phase: 'Failed', message: `agent pod ${pod.metadata.name} was deleted`, replacing: true, deleted: true };
    if (phase === 'Succeeded') return { phase };
    // restartPolicy Never: the pod stays Running while some containers live on, but without its
    // main container nobody runs the tasks, and without a plugin sidecar every call to that
    // plugin fails — a failed agent, not a slow one.
    const containers = status.containerStatuses ?? [];
    const main = containers.find((c) => c.name === AGENT_CONTAINER)?.state?.terminated;
    if (!main && !containers.some((c) => c.name !== AGENT_CONTAINER && c.state?.terminated)) return { phase };
    if (main && main.exitCode === 0 && phase === 'Running') return { phase };
  }
  const reasons: string[] = [];
  for (const c of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
    const t = c.state?.terminated;
    const sidecar = c.name !== AGENT_CONTAINER && !(status.initContainerStatuses ?? []).includes(c);
    if (t && (t.exitCode !== 0 || sidecar))
      reasons.push(
        `${c.name}: ${t.reason || (t.exitCode ? 'Error' : 'Completed')} (exit code ${t.exitCode})${t.message ? `: ${t.message.trim().slice(0, 300)}` : ''}`,
      );
  }
  const why = reasons.length ? reasons.join('; ') : [status.reason, status.message].filter(Boolean).join(': ') || 'unknown reason';
  return { phase: 'Failed', message: `agent pod ${pod.metadata?.name} failed: ${why}`, replacing: true };
}

/**
 * The template sources the workflow needs, from the informer caches (the engine's resolver
 * follows references transitively). No lookup limit: a cache lookup costs nothing and each
 * source is looked up once, so the walk is bounded by the templates in the cache.
 */
export function collectTemplateSources(
  inputs: Pick<ObservationInputs, 'workflow' | 'workflowTemplate' | 'clusterWorkflowTemplate'>,
): Record<string, TemplateSource> {
  const resolved = resolveTemplateSources(inputs.workflow, cachedTemplates(inputs, inputs.workflow.metadata.namespace ?? ''));
  // Unlimited, so never refused; the branch keeps the type honest.
  return resolved.ok ? resolved.sources : {};
}

/** The template-source lookup over the informer caches, for a workflow in `ns`. */
export function cachedTemplates(inputs: Pick<ObservationInputs, 'workflowTemplate' | 'clusterWorkflowTemplate'>, ns: string): SourceLookup {
  return (ref) => {
    const found = ref.kind === 'WorkflowTemplate' ? inputs.workflowTemplate(ns, ref.name) : inputs.clusterWorkflowTemplate(ref.name);
    return found ? (found.spec ?? {}) : undefined;
  };
}
