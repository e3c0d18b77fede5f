/**
 * Time limits of leaf nodes (pods, agent tasks, suspend nodes):
 *
 * - `activeDeadlineSeconds` of the template: how long one attempt may be active, from the
 *   attempt's start. The engine enforces it itself (a pod also gets it in its spec, but a node must
 *   not depend on the kubelet to end).
 * - `timeout` of the template: total time from the node's first start, Pending included; for a
 *   retried template it counts from the first attempt, so retries cannot extend it.
 * - the workflow's shutdown (deadline, `spec.shutdown`): a running leaf ends at once.
 *
 * When a limit is reached the node Fails with a message naming the limit, and the caller stops
 * the pod or task. Otherwise the earliest limit becomes a requeue time.
 */
import { intOrStringToNumber, parseSecondsOrDuration, type NodeStatus, type Template } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { toMs } from './node-phase.js';

export interface LeafTiming {
  /** Start of the `timeout` clock (the retry node's start for retried templates). */
  timeoutStartMs?: number;
}

/** Returns the message to fail the node with when a limit is reached, else undefined (and requeues). */
export function leafLimitReached(
  run: EngineRun,
  node: NodeStatus,
  template: Template,
  timing: LeafTiming,
  where: string,
): string | undefined {
  if (run.shutdown) return run.shutdown.message;
  const started = toMs(node.startedAt, run.nowMs);
  const limits: Array<{ at: number; message: string }> = [];
  if (template.activeDeadlineSeconds !== undefined && template.activeDeadlineSeconds !== '') {
    const seconds = intOrStringToNumber(template.activeDeadlineSeconds, `${where}.activeDeadlineSeconds`);
    limits.push({ at: started + seconds * 1000, message: `Step exceeded its deadline (activeDeadlineSeconds ${seconds})` });
  }
  if (template.timeout !== undefined && template.timeout !== '') {
    const ms = parseSecondsOrDuration(template.timeout, { field: `${where}.timeout` });
    limits.push({ at: (timing.timeoutStartMs ?? started) + ms, message: `Step exceeded its timeout of ${template.timeout}` });
  }
  limits.sort((a, b) => a.at - b.at);
  const first = limits[0];
  if (!first) return undefined;
  if (run.nowMs >= first.at) return first.message;
  run.requeueAt(first.at);
  return undefined;
}
