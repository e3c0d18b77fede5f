/**
 * Cron schedules of a CronWorkflow: standard five-field expressions (minute hour day month
 * weekday), six fields with seconds first, the descriptors (`@hourly`, `@daily`, …) and
 * `@every <duration>` (the peer's cron library has it; `@every 1s` is the smallest period), each
 * in the CronWorkflow's `timezone` (IANA name; UTC when empty). Parsed with croner, except
 * `@every`, which counts from the Unix epoch so that its times do not depend on when the
 * controller started.
 */
import { Cron } from 'croner';
import { parseGoDuration } from '../api/index.js';

export interface Schedule {
  /** The expression as written. */
  text: string;
  /** The first scheduled time strictly after `afterMs`. */
  next(afterMs: number): number | undefined;
}

export type ParsedSchedule = { ok: true; schedule: Schedule } | { ok: false; error: string };

export function parseSchedule(text: string, timezone: string | undefined, field: string): ParsedSchedule {
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
    return { ok: true, schedule: { text, next: (after) => (Math.floor(after / ms) + 1) * ms } };
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

/**
 * The latest scheduled time in (afterMs, untilMs], or undefined when none is. Only the latest
 * missed run is ever started (as Kubernetes CronJobs do), so it is found by looking back through
 * growing windows (a minute, an hour, a day, a month, then all the way) instead of walking every
 * second of a long outage.
 */
export function latestDue(schedules: readonly Schedule[], afterMs: number, untilMs: number): number | undefined {
  for (const window of [60_000, 3_600_000, 86_400_000, 31 * 86_400_000, Infinity]) {
    const from = Math.max(afterMs, untilMs - window);
    let latest: number | undefined;
    for (let t = nextOf(schedules, from), steps = 0; t !== undefined && t <= untilMs && steps < 100_000; t = nextOf(schedules, t), steps++)
      latest = t;
    if (latest !== undefined || from === afterMs) return latest;
  }
  return undefined;
}
