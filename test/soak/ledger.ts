/**
 * What the soak driver did, as it did it: every workflow it meant to submit, every event it
 * sent and how each was answered, every chaos action. The invariants are checked against this
 * record and the cluster's final state.
 */
import type { WorkflowPhase } from '../../src/api/index.js';
import type { DesignName } from './designs.js';

export interface Submission {
  name: string;
  namespace: string;
  design: DesignName;
  expected: WorkflowPhase;
  tries: number;
  /** The server answered 200 (or 409: an earlier try that looked failed had created it). */
  accepted: boolean;
  /** Every failed try's answer, for the report. */
  errors: string[];
}

export type EventKind = 'match' | 'nomatch' | 'invalid';

export interface SentEvent {
  id: string;
  kind: EventKind;
  /** ms since the soak started. */
  sentAt: number;
  /** HTTP status, or 0 when the request failed without one (connection refused or reset). */
  status: number;
  error?: string;
}

export interface ChaosRecord {
  kind: string;
  /** ms since the soak started. */
  at: number;
  /** What was hit and how it went. */
  detail: string;
  /** ms the target was down (when it applies). */
  downMs?: number;
  /** ms since the soak started when the kill signal was sent (server actions). */
  signalAt?: number;
  skipped?: boolean;
}

export class Ledger {
  readonly started = Date.now();
  readonly submissions = new Map<string, Submission>();
  readonly events: SentEvent[] = [];
  readonly chaos: ChaosRecord[] = [];
  /** Incidents worth a line in the report (lane timeouts and the like). */
  readonly notes: string[] = [];
  /**
   * The server stores events in an event bus: its 503 may follow a store whose acknowledgement
   * was lost, so the event may still happen (like an event that got no answer).
   */
  eventBus = false;

  now(): number {
    return Date.now() - this.started;
  }

  note(line: string): void {
    this.notes.push(`[${(this.now() / 1000).toFixed(1)}s] ${line}`);
  }
}
