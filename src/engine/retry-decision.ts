/**
 * Whether and when a failed attempt of a retried node is tried again. Pure arithmetic over the
 * attempts so far: the caller evaluates the retry `expression` (it needs the expression language)
 * and passes its verdict in.
 *
 * Rules, in this order:
 * 1. `retryPolicy` decides which outcomes may be retried: `OnFailure` (the default) retries
 *    Failed attempts, `OnError` retries Error attempts, `Always` both, `OnTransientError` Error
 *    attempts whose message looks transient (pod deleted, node shutdown, connection trouble).
 * 2. `limit` is the number of retries after the first attempt (so at most limit+1 attempts);
 *    without a limit there is no cap.
 * 3. `expression` false stops retrying.
 * 4. `backoff`: the n-th retry waits `duration * factor^(n-1)` after the previous attempt ended
 *    (factor defaults to 1), never more than `cap` when given. `maxDuration` bounds the time from the first attempt's start: once
 *    it is past, or when the next wait would end past it, the node fails instead of waiting.
 */
import { formatDuration, type RETRY_POLICIES } from '../api/index.js';

/** One of the retry policies src/api knows. */
export type RetryPolicyName = (typeof RETRY_POLICIES)[number];

export interface AttemptSummary {
  phase: 'Failed' | 'Error';
  message?: string;
  /** Milliseconds since the epoch. */
  startedAt: number;
  finishedAt: number;
}

export interface RetryParams {
  policy: RetryPolicyName;
  /** Retries allowed after the first attempt; undefined means no cap. */
  limit?: number;
  backoffMs?: number;
  factor?: number;
  maxDurationMs?: number;
  /** The longest one wait may grow to. */
  capMs?: number;
}

export type RetryDecision =
  /** Start the next attempt now. */
  | { kind: 'retry' }
  /** Start the next attempt at `at` (ms); until then the retry node says `message`. */
  | { kind: 'wait'; at: number; message: string }
  /** Do not retry; the retry node ends with the last attempt's phase and this message. */
  | { kind: 'stop'; message: string };

/** Messages of errors that are worth retrying under `OnTransientError`. */
const TRANSIENT =
  /pod deleted|imminent node shutdown|connection (refused|reset)|timeout|timed out|temporarily unavailable|too many requests|agent/i;

export function decideRetry(
  params: RetryParams,
  attempts: readonly AttemptSummary[],
  now: number,
  expressionAllows: () => boolean | string,
): RetryDecision {
  const last = attempts[attempts.length - 1];
  if (!last) return { kind: 'retry' };
  if (!policyAllows(params.policy, last)) {
    return { kind: 'stop', message: last.message ?? `${last.phase} (retryPolicy ${params.policy} does not retry it)` };
  }
  const retriesDone = attempts.length - 1;
  if (params.limit !== undefined && retriesDone >= params.limit) {
    return { kind: 'stop', message: `No more retries left (${params.limit}): ${last.message ?? last.phase}` };
  }
  const verdict = expressionAllows();
  if (verdict !== true) {
    return {
      kind: 'stop',
      message: typeof verdict === 'string' ? verdict : `retryStrategy.expression is false: ${last.message ?? last.phase}`,
    };
  }
  let maxDeadline: number | undefined;
  if (params.maxDurationMs !== undefined) {
    maxDeadline = attempts[0]!.startedAt + params.maxDurationMs;
    if (now >= maxDeadline) return { kind: 'stop', message: `Max duration limit exceeded: ${last.message ?? last.phase}` };
  }
  if (params.backoffMs === undefined || params.backoffMs <= 0) return { kind: 'retry' };
  const wait = backoffDelay(params.backoffMs, params.factor, retriesDone + 1, params.capMs);
  const at = last.finishedAt + wait;
  if (maxDeadline !== undefined && at > maxDeadline) {
    return { kind: 'stop', message: `Backoff would exceed max duration limit: ${last.message ?? last.phase}` };
  }
  if (now < at) return { kind: 'wait', at, message: `Backoff for ${formatDuration(wait)}` };
  return { kind: 'retry' };
}

/** Wait before retry number `retry` (1-based): `base * factor^(retry-1)`, factor defaulting to 1, at most `capMs`. */
export function backoffDelay(baseMs: number, factor: number | undefined, retry: number, capMs?: number): number {
  const f = factor === undefined || factor <= 0 ? 1 : factor;
  const wait = Math.round(baseMs * Math.pow(f, Math.max(0, retry - 1)));
  return capMs !== undefined && capMs > 0 ? Math.min(wait, capMs) : wait;
}

function policyAllows(policy: RetryPolicyName, last: AttemptSummary): boolean {
  switch (policy) {
    case 'Always':
      return true;
    case 'OnError':
      return last.phase === 'Error';
    case 'OnTransientError':
      return last.phase === 'Error' && TRANSIENT.test(last.message ?? '');
    case 'OnFailure':
      return last.phase === 'Failed';
  }
}
