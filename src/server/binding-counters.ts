/**
 * What each WorkflowEventBinding did with the events it saw, across every server replica and
 * restart: read back from the Kubernetes Events the dispatch records on the binding (the
 * recorder folds repeats into one Event per replica whose `count` grows, patched at most once a
 * second, so counting costs the API server little however many events flow).
 *
 * - dispatched: `WorkflowSubmitted` — an event matched and its workflow was created;
 * - deduplicated: `EventDeduplicated` — a repeat of an event whose workflow already exists;
 * - failed: `WorkflowEventBindingError` — a matching event that could not submit (or an invalid
 *   binding), the Warning users already see in `kubectl describe`;
 * - accepted: the three together, the events the binding took on.
 *
 * The counts cover the Events the API server still keeps (its `--event-ttl`, an hour by
 * default): `since` is the oldest first occurrence among them.
 */
import { BINDING_ERROR_REASON } from './binding-compile.js';

export const SUBMITTED_REASON = 'WorkflowSubmitted';
export const DEDUPLICATED_REASON = 'EventDeduplicated';

export interface BindingCounters {
  accepted: number;
  dispatched: number;
  failed: number;
  deduplicated: number;
  /** The oldest first occurrence counted (RFC 3339), absent when nothing was counted. */
  since?: string;
}

/** The fields of a core/v1 Event this reads. */
export interface CountedEvent {
  reason?: string;
  count?: number;
  firstTimestamp?: string;
  eventTime?: string;
  involvedObject?: { kind?: string; name?: string };
}

/** Per binding name, from the namespace's Events; bindings without any are absent. */
export function bindingCounters(events: readonly CountedEvent[]): Record<string, BindingCounters> {
  const out = Object.create(null) as Record<string, BindingCounters>;
  for (const e of events) {
    if (e.involvedObject?.kind !== 'WorkflowEventBinding' || !e.involvedObject.name) continue;
    const field =
      e.reason === SUBMITTED_REASON
        ? 'dispatched'
        : e.reason === DEDUPLICATED_REASON
          ? 'deduplicated'
          : e.reason === BINDING_ERROR_REASON
            ? 'failed'
            : undefined;
    if (!field) continue;
    const c = (out[e.involvedObject.name] ??= { accepted: 0, dispatched: 0, failed: 0, deduplicated: 0 });
    const n = Math.max(1, e.count ?? 1);
    c[field] += n;
    c.accepted += n;
    const first = e.firstTimestamp ?? e.eventTime;
    if (first && (!c.since || first < c.since)) c.since = first;
  }
  return out;
}
