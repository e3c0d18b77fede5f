/**
 * What the bus does with one delivery of a stored event (event-bus.ts), decided here (pure).
 *
 * A delivery is not a failure: the stream also delivers an event again when its namespace's
 * share of this replica was full (it was put back for later, fair-lanes.ts) or when a replica
 * died holding it. So an event is given up on by time, not by a count of deliveries: its
 * dispatch is retried while the API server fails it for now, until `retryForMs` after it was
 * accepted (a time the envelope seals), and then it goes to the dead letters with the reasons.
 */
import type { DispatchResult } from './dispatch.js';

/** What to do with a delivery once its dispatch ran. */
export type DeliveryVerdict =
  { action: 'ack' } | { action: 'retry'; delayMs: number; reason: string } | { action: 'dead-letter'; reason: string };

/** Longest pause before a failed event is delivered again. */
const MAX_RETRY_PAUSE_MS = 30_000;

/**
 * Acknowledge unless a binding failed only for now (the API server stayed unreachable or
 * overloaded through the dispatcher's own retries): then deliver again after a pause that grows
 * with the event's age (a quarter of it, 1 s to 30 s), and once the event is older than
 * `retryForMs`, dead-letter it with the reasons. Failures that will not heal (a missing template,
 * a refused create) are recorded on their binding and acknowledged: delivering again would only
 * repeat them.
 */
export function deliveryVerdict(result: DispatchResult, ageMs: number, retryForMs: number): DeliveryVerdict {
  const retryable = result.errors.filter((e) => e.retryable);
  if (retryable.length === 0) return { action: 'ack' };
  const reason = retryable.map((e) => `${e.binding}: ${e.message}`).join('; ');
  return failedFor(reason, ageMs, retryForMs);
}

/** A dispatch that failed for `reason` (or threw): again later, or dead letters once the event is too old. */
export function failedFor(reason: string, ageMs: number, retryForMs: number): DeliveryVerdict {
  if (ageMs >= retryForMs)
    return { action: 'dead-letter', reason: `still failing ${Math.round(ageMs / 1000)} s after it was accepted: ${reason}` };
  return { action: 'retry', delayMs: Math.round(Math.min(MAX_RETRY_PAUSE_MS, Math.max(1000, ageMs / 4))), reason };
}

/**
 * How long an event whose namespace holds its share of this replica is put back for: a little
 * longer each time it comes back (250 ms per delivery, at most 5 s), so a flood costs the bus a
 * bounded number of deliveries a second while the namespace's own events run.
 */
export function deferPauseMs(delivery: number): number {
  return Math.min(5_000, 250 * Math.max(1, delivery));
}
