import { describe, expect, it } from 'vitest';
import { latestDue, nextOf, parseSchedule, type Schedule } from './schedule.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
function schedule(text: string, tz?: string): Schedule {
  const p = parseSchedule(text, tz, 'spec.schedule');
  if (!p.ok) throw new Error(p.error);
  return p.schedule;
}

describe('cron schedules', () => {
  it('reads five fields in UTC, six with seconds, descriptors, and @every', () => {
    expect(iso(schedule('*/5 * * * *').next(at('2026-01-01T00:02:00Z')))).toBe('2026-01-01T00:05:00.000Z');
    expect(iso(schedule('* * * * * *').next(at('2026-01-01T00:02:00.400Z')))).toBe('2026-01-01T00:02:01.000Z');
    expect(iso(schedule('@hourly').next(at('2026-01-01T00:02:00Z')))).toBe('2026-01-01T01:00:00.000Z');
    expect(iso(schedule('@every 90s').next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:01:30.000Z');
  });

  it('reads a schedule in its timezone', () => {
    // 09:00 in New York in January is 14:00 UTC.
    expect(iso(schedule('0 9 * * *', 'America/New_York').next(at('2026-01-05T12:00:00Z')))).toBe('2026-01-05T14:00:00.000Z');
  });

  it('refuses a bad expression, a bad timezone and a period under a second, naming the field', () => {
    expect(parseSchedule('61 * * * *', undefined, 'spec.schedules[1]')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^spec\.schedules\[1\]: "61 \* \* \* \*" is not a cron schedule/),
    });
    expect(parseSchedule('* * * * *', 'Mars/Olympus', 'spec.schedule')).toMatchObject({
      ok: false,
      error: expect.stringContaining('in timezone "Mars/Olympus"'),
    });
    expect(parseSchedule('@every 500ms', undefined, 'spec.schedule')).toEqual({
      ok: false,
      error: 'spec.schedule: "@every 500ms": the smallest period is 1s',
    });
    expect(parseSchedule('  ', undefined, 'spec.schedule')).toEqual({ ok: false, error: 'spec.schedule: a schedule is required' });
  });

  it('takes the earliest of several schedules', () => {
    expect(iso(nextOf([schedule('0 12 * * *'), schedule('30 6 * * *')], at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T06:30:00.000Z');
  });

  it('finds the latest missed time of a long outage without walking every second of it', () => {
    const every = [schedule('* * * * * *')];
    expect(iso(latestDue(every, at('2026-01-01T00:00:00Z'), at('2026-03-01T12:00:00.500Z')))).toBe('2026-03-01T12:00:00.000Z');
    expect(latestDue(every, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:00.900Z'))).toBeUndefined();
    expect(iso(latestDue([schedule('0 0 1 1 *')], at('2020-01-02T00:00:00Z'), at('2026-06-01T00:00:00Z')))).toBe(
      '2026-01-01T00:00:00.000Z',
    );
  });
});

describe('the latest time of one schedule', () => {
  it('includes a run at exactly the time asked and nothing after it', () => {
    const s = schedule('0 12 * * *');
    expect(iso(s.latest(at('2026-01-02T12:00:00.000Z')))).toBe('2026-01-02T12:00:00.000Z');
    expect(iso(s.latest(at('2026-01-02T11:59:59.999Z')))).toBe('2026-01-01T12:00:00.000Z');
    const every = schedule('@every 1m');
    expect(iso(every.latest(at('2026-01-02T12:00:00.000Z')))).toBe('2026-01-02T12:00:00.000Z');
    expect(iso(every.latest(at('2026-01-02T11:59:59.999Z')))).toBe('2026-01-02T11:59:00.000Z');
  });

  it('finds a run far back, or after hours of per-second runs, in one look (no walk)', () => {
    // Every second during hours 0-22: at 23:30 the latest is 22:59:59, 30 minutes back.
    const s = schedule('* * 0-22 * * *');
    const t0 = performance.now();
    expect(iso(latestDue([s], at('2025-01-01T00:00:00Z'), at('2026-01-01T23:30:00Z')))).toBe('2026-01-01T22:59:59.000Z');
    expect(iso(latestDue([schedule('0 0 29 2 *')], 0, at('2026-06-01T00:00:00Z')))).toBe('2024-02-29T00:00:00.000Z');
    expect(performance.now() - t0).toBeLessThan(2000); // a walk over the seconds took minutes
  });

  it('refuses an overlong expression and timezone, naming the field and the limit', () => {
    expect(parseSchedule(`* * * * * ${' '.repeat(300)}`, undefined, 'spec.schedules[0]')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^spec\.schedules\[0\]: a schedule is at most 256 characters/),
    });
    expect(parseSchedule('* * * * *', 'X'.repeat(65), 'spec.schedule')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/timezone is at most 64 characters/),
    });
  });
});
