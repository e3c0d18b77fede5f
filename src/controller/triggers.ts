/**
 * Which cache events make a workflow worth reconciling. Every reconcile costs an engine run and
 * possibly writes, so events that cannot change the engine's answer are dropped here:
 *
 * - a workflow update that is only the echo of this controller's own write (recognised by
 *   content: the watch event of a write can arrive before the write's reply);
 * - a pod update whose observation (phase, message, outputs) and deletion state did not change —
 *   the runner/kubelet updates conditions, IPs and timestamps several times per pod;
 * - a pod created by this controller that is still Pending (nothing for the engine to learn);
 * - a TaskSet update that adds or changes no `status` entry (our own task writes and prunes).
 *
 * Pure.
 */
import { LABEL_COMPLETED, LABEL_PHASE, type Workflow, type WorkflowStatus, type WorkflowTaskSet } from '../api/index.js';
import { jsonEqual } from '../api/index.js';
import { observePod } from '../pods/observe-pod.js';
import type { CachedPod } from './caches.js';
import { isAgentPod, observeAgent } from './observations.js';

/** What about a pod the engine can see; equal signatures → nothing new. */
export function podSignature(pod: CachedPod): unknown {
  // The agent's observation, not just the pod phase: its main container can die while plugin
  // sidecars keep the pod Running, and that is a failed agent the engine must hear about.
  if (isAgentPod(pod)) return { agent: observeAgent(pod).phase, deleting: !!pod.metadata?.deletionTimestamp };
  const o = observePod(pod);
  return { phase: o.phase, message: o.message, outputs: o.outputs, deleting: !!pod.metadata?.deletionTimestamp };
}

export function podChangeMatters(old: CachedPod, pod: CachedPod): boolean {
  return !jsonEqual(podSignature(old), podSignature(pod));
}

/** A new pod matters unless it is a plain Pending pod (which is what creating it means). */
export function podAddMatters(pod: CachedPod): boolean {
  const sig = podSignature(pod) as { phase?: string; agent?: string; deleting: boolean; message?: string };
  if (sig.deleting) return true;
  if ('agent' in sig) return sig.agent !== 'Pending' && sig.agent !== '';
  return sig.phase !== 'Pending' || sig.message !== undefined;
}

/**
 * A TaskSet update matters when the agent reported something new; entries that only went away
 * are this controller pruning results it has already copied into the workflow.
 */
export function taskSetChangeMatters(old: WorkflowTaskSet, ts: WorkflowTaskSet): boolean {
  const before = old.status?.nodes ?? {};
  return Object.entries(ts.status?.nodes ?? {}).some(([id, r]) => !jsonEqual(before[id], r));
}

/**
 * True when the update from `old` to `wf` is this controller's own doing: nothing but the status
 * and the phase labels changed, and the status is `ownStatus`, the one it wrote. Reconciling such
 * an echo would compute the same answer again. A status written by anyone else is not an echo.
 * Statuses are compared by their nodes, not by the compressed string they were stored as
 * (compressed-nodes.ts): the status computed still carries the string it was computed from.
 */
export function isOwnEcho(old: Workflow, wf: Workflow, ownStatus: WorkflowStatus | undefined): boolean {
  return (
    ownStatus !== undefined &&
    jsonEqual(withoutCompressed(wf.status), withoutCompressed(ownStatus)) &&
    jsonEqual(withoutStatus(old), withoutStatus(wf))
  );
}

function withoutCompressed(status: WorkflowStatus | undefined): WorkflowStatus | undefined {
  if (status?.compressedNodes === undefined) return status;
  const { compressedNodes: _stored, ...rest } = status;
  return rest;
}

/** The workflow minus what a status write or a phase-label write changes. */
function withoutStatus(wf: Workflow): unknown {
  const { resourceVersion: _rv, managedFields: _mf, labels, ...meta } = wf.metadata as Workflow['metadata'] & { managedFields?: unknown };
  const others = { ...(labels ?? {}) };
  delete others[LABEL_PHASE];
  delete others[LABEL_COMPLETED];
  return { spec: wf.spec, metadata: { ...meta, labels: others } };
}
