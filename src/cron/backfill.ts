/**
 * Backfills of a CronWorkflow, pure: planning a new one (what `plugflow cron backfill`, the REST
 * route and the UI ask for) and deciding, at each look of the controller, which of its runs start.
 *
 * A backfill is an entry of `spec.backfills` — {name, from, to, parallel} — named by its range, so
 * asking twice for the same range finds the first entry and adds nothing. Its runs are the
 * workflows of the scheduled times in [from, to], named as the schedule names them
 * (`<cron>-<unix seconds>`, src/cron/run-workflow.ts): a time that already ran, scheduled or
 * backfilled, is never started again (the create meets AlreadyExists), and a time inside an
 * earlier backfill's range is left to that one, even once its run was deleted. The controller
 * starts `parallel` at a time, oldest first, and keeps the progress in `status.backfills`.
 */
import {
  LABEL_BACKFILL,
  MAX_BACKFILL_PARALLEL,
  MAX_BACKFILL_RUNS,
  MAX_BACKFILLS,
  type Backfill,
  type BackfillStatus,
  type CronWorkflow,
  type Workflow,
} from '../api/index.js';
import { runWorkflow } from './run-workflow.js';
import { nextOf, timesIn, type Schedule } from './schedule.js';

const FINAL = ['Succeeded', 'Failed', 'Error'];
/** A run created this long ago and not yet in the cache still counts as running (the cache lags the create). */
export const BACKFILL_CACHE_GRACE_MS = 60_000;

export interface BackfillRequest {
  from: string;
  to: string;
  parallel?: number;
}

export type BackfillPlan =
  { ok: true; entry: Backfill; runs: number; covered: number; existing: boolean; drop: string[] } | { ok: false; error: string };

/** RFC 3339 with a zone (`Z` or `+01:00`): a time without one would be read in whoever's zone. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

function parseTime(value: unknown, field: string): number | string {
  if (typeof value !== 'string' || !RFC3339.test(value.trim()))
    return `${field}: ${JSON.stringify(value)} is not an RFC 3339 time with its zone (2026-11-01T00:00:00Z, 2026-11-01T00:00:00+01:00)`;
  const ms = Date.parse(value.trim());
  return Number.isNaN(ms) ? `${field}: ${JSON.stringify(value)} is not a time` : ms;
}

/** The name of the backfill of [from, to]: the same range always has the same name. */
export function backfillName(fromMs: number, toMs: number): string {
  return `bf-${Math.floor(fromMs / 1000)}-${Math.floor(toMs / 1000)}`;
}

const inRange = (t: number, e: { fromMs: number; toMs: number }) => t >= e.fromMs && t <= e.toMs;

function ranges(entries: readonly Backfill[]): { name: string; fromMs: number; toMs: number }[] {
  return entries.map((e) => ({ name: e.name, fromMs: Date.parse(e.from), toMs: Date.parse(e.to) })).filter((r) => !Number.isNaN(r.fromMs));
}

/**
 * Plans the backfill of [from, to]: refused (naming the field) when a time is malformed, the range
 * is reversed or reaches past `nowMs` (the schedule runs those itself), `parallel` is out of
 * bounds, or the range holds more than MAX_BACKFILL_RUNS times. The same range as an earlier
 * backfill answers that one (`existing`); times of earlier ranges are counted as `covered`.
 * When the list is full, the oldest complete backfills are dropped (`drop`) to make room.
 */
export function planBackfill(cron: CronWorkflow, schedules: readonly Schedule[], req: BackfillRequest, nowMs: number): BackfillPlan {
  const what = `CronWorkflow ${cron.metadata.namespace ?? ''}/${cron.metadata.name ?? ''}`;
  const from = parseTime(req.from, 'from');
  if (typeof from === 'string') return { ok: false, error: from };
  const to = parseTime(req.to, 'to');
  if (typeof to === 'string') return { ok: false, error: to };
  if (to < from) return { ok: false, error: `to (${req.to}) is before from (${req.from})` };
  if (to > nowMs)
    return {
      ok: false,
      error: `to (${req.to}) is in the future: ${what} runs the times from now on by its schedule; backfill up to ${new Date(nowMs).toISOString()} at most`,
    };
  const parallel = req.parallel ?? 1;
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_BACKFILL_PARALLEL)
    return { ok: false, error: `parallel: ${String(req.parallel)} is not a whole number from 1 to ${MAX_BACKFILL_PARALLEL}` };
  const { times, more } = timesIn(schedules, from, to, MAX_BACKFILL_RUNS);
  if (more)
    return {
      ok: false,
      error: `${what}: from ${req.from} to ${req.to} holds more than ${MAX_BACKFILL_RUNS} scheduled times, the most one backfill may start; split the range (the first ${MAX_BACKFILL_RUNS} end at ${new Date(times[times.length - 1]!).toISOString()})`,
    };
  if (times.length === 0) return { ok: false, error: `${what}: its schedule names no time from ${req.from} to ${req.to}` };
  const entries = cron.spec.backfills ?? [];
  const name = backfillName(from, to);
  const same = entries.find((e) => e.name === name);
  const earlier = ranges(entries);
  const covered = times.filter((t) => earlier.some((r) => inRange(t, r))).length;
  if (same) return { ok: true, entry: same, runs: 0, covered: times.length, existing: true, drop: [] };
  const entry: Backfill = { name, from: new Date(from).toISOString(), to: new Date(to).toISOString(), parallel };
  const drop: string[] = [];
  if (entries.length >= MAX_BACKFILLS) {
    const complete = new Set((cron.status?.backfills ?? []).filter((s) => s.phase !== 'Running').map((s) => s.name));
    const droppable = entries.filter((e) => complete.has(e.name)).map((e) => e.name);
    const need = entries.length - MAX_BACKFILLS + 1;
    if (droppable.length < need)
      return {
        ok: false,
        error: `${what} already has ${entries.length} backfills, ${entries.length - droppable.length} of them still running (at most ${MAX_BACKFILLS}); wait for one to complete`,
      };
    drop.push(...droppable.slice(0, need));
  }
  return { ok: true, entry, runs: times.length - covered, covered, existing: false, drop };
}

export interface BackfillDecision {
  create: Workflow[];
  status: BackfillStatus[];
  notes: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

/** A run of a backfill, as the cache shows it. */
export interface BackfillChild {
  name: string;
  phase?: string;
  backfill?: string;
}

/**
 * Which runs of each backfill start now: up to its `parallel` less those of its runs still running
 * (by its status's `running` list; a run not yet in the cache counts for BACKFILL_CACHE_GRACE_MS
 * after it was started). Nothing starts while the CronWorkflow is suspended. Each look costs the
 * runs it starts plus the times it skips, never a walk of the whole range.
 */
export function decideBackfills(
  cron: CronWorkflow,
  schedules: readonly Schedule[],
  children: readonly BackfillChild[],
  nowMs: number,
): BackfillDecision {
  const out: BackfillDecision = { create: [], status: [], notes: [] };
  const entries = cron.spec.backfills ?? [];
  const previous = new Map((cron.status?.backfills ?? []).map((s) => [s.name, s]));
  const byName = new Map(children.map((c) => [c.name, c]));
  const seen = ranges(entries);
  entries.forEach((entry, i) => {
    const prev = previous.get(entry.name);
    if (prev && prev.phase !== 'Running') {
      out.status.push(prev);
      return;
    }
    const fromMs = Date.parse(entry.from);
    // An entry written by hand may reach past now: those times are the schedule's, never started early.
    const toMs = Math.min(Date.parse(entry.to), nowMs);
    if (Number.isNaN(fromMs) || Number.isNaN(toMs) || toMs < fromMs) {
      const message = `spec.backfills[${i}] (${entry.name}): from and to must be RFC 3339 times, from not after to`;
      out.status.push({ name: entry.name, total: 0, started: 0, phase: 'Failed', message });
      out.notes.push({ type: 'Warning', reason: 'BackfillFailed', message });
      return;
    }
    const earlier = seen.slice(0, i);
    const covered = (t: number) => earlier.some((r) => inRange(t, r));
    let total = prev?.total;
    if (total === undefined) {
      const { times, more } = timesIn(schedules, fromMs, toMs, MAX_BACKFILL_RUNS);
      if (more) {
        const message = `spec.backfills[${i}] (${entry.name}): the range holds more than ${MAX_BACKFILL_RUNS} scheduled times; split it`;
        out.status.push({ name: entry.name, total: 0, started: 0, phase: 'Failed', message });
        out.notes.push({ type: 'Warning', reason: 'BackfillFailed', message });
        return;
      }
      total = times.filter((t) => !covered(t)).length;
    }
    const status: BackfillStatus = {
      ...(prev ?? {}),
      name: entry.name,
      total,
      started: prev?.started ?? 0,
      phase: 'Running',
    };
    const lastStart = Date.parse(prev?.startedAt ?? '') || 0;
    const running = (prev?.running ?? []).filter((n) => {
      const c = byName.get(n);
      return c ? !FINAL.includes(c.phase ?? '') : nowMs - lastStart < BACKFILL_CACHE_GRACE_MS;
    });
    let next: number | undefined = prev?.next ? Date.parse(prev.next) : prev ? undefined : firstTime(schedules, fromMs - 1, toMs, covered);
    const parallel = entry.parallel ?? 1;
    if (!cron.spec.suspend) {
      while (next !== undefined && running.length < parallel) {
        const wf = runWorkflow(cron, next, { [LABEL_BACKFILL]: entry.name });
        out.create.push(wf);
        running.push(wf.metadata.name!);
        status.started++;
        status.startedAt = new Date(nowMs).toISOString();
        next = firstTime(schedules, next, toMs, covered);
      }
    }
    if (next === undefined) delete status.next;
    else status.next = new Date(next).toISOString();
    status.running = running;
    if (next === undefined && running.length === 0) {
      status.phase = 'Complete';
      delete status.running;
      delete status.startedAt;
      out.notes.push({
        type: 'Normal',
        reason: 'BackfillComplete',
        message: `backfill ${entry.name} (${entry.from} to ${entry.to}) complete: ${status.started} runs started`,
      });
    }
    out.status.push(status);
  });
  return out;
}

/** The first scheduled time after `afterMs` and at most `toMs` that no earlier backfill covers. */
function firstTime(schedules: readonly Schedule[], afterMs: number, toMs: number, covered: (t: number) => boolean): number | undefined {
  let t = nextOf(schedules, afterMs);
  while (t !== undefined && t <= toMs && covered(t)) t = nextOf(schedules, t);
  return t !== undefined && t <= toMs ? t : undefined;
}
