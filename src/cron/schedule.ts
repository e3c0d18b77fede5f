/**
 * Cron schedules of a CronWorkflow: standard five-field expressions (minute hour day month
 * weekday), six fields with seconds first, the descriptors (`@hourly`, `@daily`, …) and
 * `@every <duration>` (the peer's cron library has it; `@every 1s` is the smallest period), each
 * in the CronWorkflow's `timezone` (IANA name; UTC when empty). Parsed with croner, except
 * `@every`, which counts from the Unix epoch so that its times do not depend on when the
 * controller started.
 *
 * Every schedule answers "next after t" and "latest at or before t" in a bounded number of steps
 * (croner's nextRun/previousRuns, arithmetic for `@every`), so a CronWorkflow's cost per look is
 * its number of schedules (bounded by MAX_SCHEDULES), never the length of an outage.
 */
import { Cron } from 'croner';
import { parseGoDuration } from '../api/index.js';
import { MAX_SCHEDULE_LENGTH, MAX_TIMEZONE_LENGTH } from '../api/index.js';

export { MAX_SCHEDULES, MAX_SCHEDULE_LENGTH, MAX_TIMEZONE_LENGTH } from '../api/index.js';

export interface Schedule {
  /** The expression as written. */
  text: string;
  /** The first scheduled time strictly after `afterMs`. */
  next(afterMs: number): number | undefined;
  /** The last scheduled time at or before `untilMs`. */
  latest(untilMs: number): number | undefined;
  /** The last `n` scheduled times at or before `untilMs`, latest first. */
  latestN(untilMs: number, n: number): number[];
}

export type ParsedSchedule = { ok: true; schedule: Schedule } | { ok: false; error: string };

export function parseSchedule(text: string, timezone: string | undefined, field: string): ParsedSchedule {
  if (text.length > MAX_SCHEDULE_LENGTH)
    return { ok: false, error: `${field}: a schedule is at most ${MAX_SCHEDULE_LENGTH} characters (this one has ${text.length})` };
  if (timezone !== undefined && timezone.length > MAX_TIMEZONE_LENGTH)
    return { ok: false, error: `${field}: the timezone is at most ${MAX_TIMEZONE_LENGTH} characters (an IANA name such as Europe/Berlin)` };
  const expr = text.trim();
  const every = /^@every\s+(\S+)$/.exec(expr);
  if (every) {
    let ms: number;
    try {
      ms = parseGoDuration(every[1]!);
    } catch {
      return { ok: false, error: `${field}: ${JSON.stringify(text)}: "${every[1]}" is not a duration (1s, 5m, 1h30m)` };
    }
    if (!(ms >= 1000)) return { ok: false, error: `${field}: ${JSON.stringify(text)}: the smallest period is 1s` };
    return {
      ok: true,
      schedule: {
        text,
        next: (after) => (Math.floor(after / ms) + 1) * ms,
        latest: (until) => Math.floor(until / ms) * ms,
        latestN: (until, n) => Array.from({ length: Math.max(0, n) }, (_, i) => (Math.floor(until / ms) - i) * ms),
      },
    };
  }
  if (expr === '') return { ok: false, error: `${field}: a schedule is required` };
  let cron: Cron;
  try {
    cron = new Cron(expr, { paused: true, ...(timezone ? { timezone } : { utcOffset: 0 }), legacyMode: true });
    cron.nextRun(new Date(0)); // an unknown timezone only shows when a time is computed
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error: `${field}: ${JSON.stringify(text)} is not a cron schedule${timezone ? ` in timezone ${JSON.stringify(timezone)}` : ''}: ${message}`,
    };
  }
  return {
    ok: true,
    schedule: {
      text,
      next: (after) => cron.nextRun(new Date(after))?.getTime(),
      // previousRuns includes a run earlier in the reference's own second: one ms on includes `until`.
      latest: (until) => cron.previousRuns(1, new Date(until + 1))[0]?.getTime(),
      latestN: (until, n) => (n > 0 ? cron.previousRuns(n, new Date(until + 1)).map((d) => d.getTime()) : []),
    },
  };
}

/** The earliest time after `afterMs` any of `schedules` fires. */
export function nextOf(schedules: readonly Schedule[], afterMs: number): number | undefined {
  let best: number | undefined;
  for (const s of schedules) {
    const t = s.next(afterMs);
    if (t !== undefined && (best === undefined || t < best)) best = t;
  }
  return best;
}

/** The latest scheduled time in (afterMs, untilMs], or undefined when none is: one look per schedule. */
export function latestDue(schedules: readonly Schedule[], afterMs: number, untilMs: number): number | undefined {
  let best: number | undefined;
  for (const s of schedules) {
    const t = s.latest(untilMs);
    if (t !== undefined && t > afterMs && (best === undefined || t > best)) best = t;
  }
  return best;
}

/**
 * The latest `n` scheduled times in (afterMs, untilMs], oldest first, and whether earlier ones in
 * that span were left out: `n` looks per schedule, however long the span.
 */
export function latestDueN(
  schedules: readonly Schedule[],
  afterMs: number,
  untilMs: number,
  n: number,
): { times: number[]; more: boolean } {
  const all = new Set<number>();
  for (const s of schedules) for (const t of s.latestN(untilMs, n + 1)) if (t > afterMs) all.add(t);
  const sorted = [...all].sort((a, b) => b - a);
  return { times: sorted.slice(0, n).reverse(), more: sorted.length > n };
}

/**
 * The scheduled times in [fromMs, toMs], oldest first, at most `limit` of them; `more` when the
 * range holds more. Walks forward one time at a time, so its cost is bounded by `limit`.
 */
export function timesIn(schedules: readonly Schedule[], fromMs: number, toMs: number, limit: number): { times: number[]; more: boolean } {
  const times: number[] = [];
  let t = nextOf(schedules, fromMs - 1);
  while (t !== undefined && t <= toMs) {
    if (times.length === limit) return { times, more: true };
    times.push(t);
    t = nextOf(schedules, t);
  }
  return { times, more: false };
}
