/**
 * What a workflow collects after itself, decided from its status and the observed pods — pure,
 * so a restarted controller decides the same (every time comes from a stored timestamp: the
 * pod's or node's finishedAt, the workflow's status.finishedAt; waiting is a `requeueAt`).
 *
 * `spec.podGC` (the peer's semantics):
 *   - OnPodCompletion: each step pod once it has ended (Succeeded or Failed) and its node has
 *     taken its result; OnPodSuccess: only pods that succeeded (failed ones stay, for logs);
 *   - OnWorkflowCompletion: every step pod once the workflow has ended; OnWorkflowSuccess: only
 *     when it Succeeded;
 *   - `labelSelector` (matchLabels / matchExpressions) restricts it to the pods it matches;
 *   - `deleteDelayDuration` (a Go duration) delays each deletion from the moment it became due.
 * A pod is collected only under a finished node: its outputs are in the status, and the engine
 * never looks at the pods of finished nodes again (execute-template.ts), so no node turns Error.
 *
 * `spec.ttlStrategy`: the finished workflow is deleted `secondsAfterSuccess` after it succeeded,
 * `secondsAfterFailure` after it failed (Failed or Error), otherwise `secondsAfterCompletion`.
 */
import {
  FINAL_WORKFLOW_PHASES,
  parseGoDuration,
  type LabelSelector,
  type PodGC,
  type TTLStrategy,
  type WorkflowStatus,
} from '../api/index.js';
import type { EngineAction, PodObservation } from './contract.js';
import { isFinal } from './node-phase.js';

export const POD_GC_STRATEGIES = ['OnPodCompletion', 'OnPodSuccess', 'OnWorkflowCompletion', 'OnWorkflowSuccess'] as const;

/** Checks `spec.podGC` and `spec.ttlStrategy`; `add(field, detail)` as validate.ts does. */
export function checkGCFields(spec: { podGC?: PodGC; ttlStrategy?: TTLStrategy }, add: (field: string, detail: string) => void): void {
  const gc = spec.podGC;
  if (gc) {
    if (gc.strategy !== undefined && gc.strategy !== '' && !(POD_GC_STRATEGIES as readonly string[]).includes(gc.strategy))
      add('spec.podGC.strategy', `must be one of ${POD_GC_STRATEGIES.join(', ')}, got ${JSON.stringify(gc.strategy)}`);
    if (gc.deleteDelayDuration !== undefined) {
      try {
        parseGoDuration(gc.deleteDelayDuration, { field: 'spec.podGC.deleteDelayDuration' });
      } catch (err) {
        add('spec.podGC.deleteDelayDuration', `is not a duration: ${(err as Error).message}`);
      }
    }
    const sel = gc.labelSelector;
    for (const [i, r] of (sel?.matchExpressions ?? []).entries()) {
      if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(r.operator))
        add(
          `spec.podGC.labelSelector.matchExpressions[${i}].operator`,
          `must be In, NotIn, Exists or DoesNotExist, got ${JSON.stringify(r.operator)}`,
        );
    }
  }
  for (const k of ['secondsAfterCompletion', 'secondsAfterSuccess', 'secondsAfterFailure'] as const) {
    const v = spec.ttlStrategy?.[k];
    if (v !== undefined && v !== null && (!Number.isInteger(v) || v < 0))
      add(`spec.ttlStrategy.${k}`, `must be a whole number of seconds, at least 0, got ${JSON.stringify(v)}`);
  }
}

/** Whether `labels` satisfy a Kubernetes label selector (an empty selector matches everything). */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector?.matchLabels ?? {})) if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  for (const r of selector?.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, r.key);
    const values = r.values ?? [];
    const ok =
      r.operator === 'In'
        ? has && values.includes(labels[r.key]!)
        : r.operator === 'NotIn'
          ? !has || !values.includes(labels[r.key]!)
          : r.operator === 'Exists'
            ? has
            : r.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

export interface GCInput {
  podGC?: PodGC;
  ttlStrategy?: TTLStrategy;
  /** The status just computed (persisted before the actions run). */
  status: WorkflowStatus;
  pods: readonly PodObservation[];
  nowMs: number;
}

/** `gcPod` actions for pods due now and one `requeueAt` for the earliest one due later. */
export function podGCActions(input: GCInput): EngineAction[] {
  const gc = input.podGC;
  const strategy = gc?.strategy;
  if (!gc || !strategy) return [];
  const delayMs = gc.deleteDelayDuration ? parseGoDuration(gc.deleteDelayDuration) : 0;
  const { status } = input;
  const complete = status.finishedAt !== undefined && FINAL_WORKFLOW_PHASES.includes(status.phase ?? '');
  const perPod = strategy === 'OnPodCompletion' || strategy === 'OnPodSuccess';
  if (!perPod && (!complete || (strategy === 'OnWorkflowSuccess' && status.phase !== 'Succeeded'))) return [];
  const actions: EngineAction[] = [];
  let later: number | undefined;
  for (const pod of input.pods) {
    if (pod.phase !== 'Succeeded' && pod.phase !== 'Failed') continue;
    if (strategy === 'OnPodSuccess' && pod.phase !== 'Succeeded') continue;
    const node = status.nodes?.[pod.nodeId];
    if (!node || !isFinal(node.phase)) continue;
    if (!selectorMatches(gc.labelSelector, pod.labels ?? {})) continue;
    const since = perPod ? (pod.finishedAt ?? node.finishedAt ?? status.finishedAt) : status.finishedAt;
    const due = (since ? Date.parse(since) : input.nowMs) + delayMs;
    if (due <= input.nowMs)
      actions.push({ kind: 'gcPod', podName: pod.podName, nodeId: pod.nodeId, reason: `spec.podGC.strategy ${strategy}` });
    else later = Math.min(later ?? due, due);
  }
  if (later !== undefined) actions.push({ kind: 'requeueAt', at: new Date(later).toISOString() });
  return actions;
}

/** The seconds after which the finished workflow is deleted, or undefined to keep it. */
export function ttlSeconds(ttl: TTLStrategy | undefined, phase: string | undefined): number | undefined {
  if (!ttl) return undefined;
  if (phase === 'Succeeded' && ttl.secondsAfterSuccess != null) return ttl.secondsAfterSuccess;
  if ((phase === 'Failed' || phase === 'Error') && ttl.secondsAfterFailure != null) return ttl.secondsAfterFailure;
  return ttl.secondsAfterCompletion ?? undefined;
}

/** `deleteWorkflow` once the finished workflow's TTL has passed, else a `requeueAt` for then. */
export function ttlActions(input: Pick<GCInput, 'ttlStrategy' | 'status' | 'nowMs'>): EngineAction[] {
  const { status } = input;
  if (!status.finishedAt || !FINAL_WORKFLOW_PHASES.includes(status.phase ?? '')) return [];
  const seconds = ttlSeconds(input.ttlStrategy, status.phase);
  if (seconds === undefined) return [];
  const due = Date.parse(status.finishedAt) + seconds * 1000;
  if (due <= input.nowMs) return [{ kind: 'deleteWorkflow', reason: `spec.ttlStrategy: ${seconds}s after it ended ${status.phase}` }];
  return [{ kind: 'requeueAt', at: new Date(due).toISOString() }];
}
