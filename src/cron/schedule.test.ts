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
