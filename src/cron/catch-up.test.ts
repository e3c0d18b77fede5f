/**
 * spec.catchUp: what happens to the times missed while the controller was down or the
 * CronWorkflow suspended — with fixed clocks, in UTC and across a DST change.
 */
import { describe, expect, it } from 'vitest';
import type { CronWorkflow } from '../api/index.js';
import { decideCron, type CronChild } from './decide.js';

const T = (iso: string) => Date.parse(iso);
const times = (d: ReturnType<typeof decideCron>) => d.create.map((w) => w.metadata.annotations?.['workflows.plugflow.io/scheduled-time']);

function cron(spec: Partial<CronWorkflow['spec']> = {}, lastScheduledTime = '2026-01-01T01:00:00Z', active: string[] = []): CronWorkflow {
  return {
    metadata: { name: 'hourly', namespace: 'ns', uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      schedule: '0 * * * *',
      workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine', command: ['true'] } }] },
      ...spec,
    },
    status: { lastScheduledTime, active: active.map((name) => ({ name, namespace: 'ns' })) },
  };
}
const running = (name: string): CronChild => ({ name, phase: 'Running', scheduledMs: 0 });

describe('catch-up after an outage (01:00 ran, the controller is back at 05:10)', () => {
  const back = T('2026-01-01T05:10:00Z');

  it('Latest (the default, as the peer): only 05:00 runs', () => {
    expect(times(decideCron(cron(), [], back))).toEqual(['2026-01-01T05:00:00.000Z']);
    expect(times(decideCron(cron({ catchUp: { policy: 'Latest' } }), [], back))).toEqual(['2026-01-01T05:00:00.000Z']);
  });

  it('None: a time more than a minute late is skipped, with a Warning naming the policy; one on time runs', () => {
    const late = decideCron(cron({ catchUp: { policy: 'None' } }), [], back);
    expect(late.create).toEqual([]);
    expect(late.status.lastScheduledTime).toBe('2026-01-01T05:00:00.000Z');
    expect(late.notes[0]?.message).toContain('spec.catchUp.policy None');
    expect(times(decideCron(cron({ catchUp: { policy: 'None' } }), [], T('2026-01-01T05:00:20Z')))).toEqual(['2026-01-01T05:00:00.000Z']);
  });

  it('All: every missed time runs, oldest first, each named and labelled by its time; the next look starts nothing again', () => {
    const d = decideCron(cron({ catchUp: { policy: 'All' } }), [], back);
    expect(times(d)).toEqual(['02', '03', '04', '05'].map((h) => `2026-01-01T${h}:00:00.000Z`));
    expect(d.create.map((w) => w.metadata.labels?.['workflows.plugflow.io/scheduled-time'])).toEqual([
      '20260101T020000Z',
      '20260101T030000Z',
      '20260101T040000Z',
      '20260101T050000Z',
    ]);
    expect(d.status.lastScheduledTime).toBe('2026-01-01T05:00:00.000Z');
    expect(d.status.active).toHaveLength(4);
    const again = decideCron({ ...cron({ catchUp: { policy: 'All' } }), status: d.status }, [], back + 5000);
    expect(again.create).toEqual([]);
  });

  it('All is bounded by maxRuns: the latest ones run and a Warning says how many were dropped', () => {
    const d = decideCron(cron({ catchUp: { policy: 'All', maxRuns: 2 } }), [], back);
    expect(times(d)).toEqual(['2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    expect(d.notes.find((n) => n.reason === 'MissedSchedule')?.message).toContain('spec.catchUp.maxRuns');
  });

  it('All after a year-long outage of @every 1s starts the latest maxRuns seconds (found backwards, not by walking the year)', () => {
    const d = decideCron(cron({ schedule: '@every 1s', catchUp: { policy: 'All', maxRuns: 100 } }, '2025-01-01T00:00:00Z'), [], back);
    expect(d.create).toHaveLength(100);
    expect(times(d).at(-1)).toBe('2026-01-01T05:10:00.000Z');
    expect(times(d)[0]).toBe('2026-01-01T05:08:21.000Z');
  });

  it('All honours startingDeadlineSeconds: older missed times are skipped in one Warning', () => {
    const d = decideCron(cron({ catchUp: { policy: 'All' }, startingDeadlineSeconds: 3 * 3600 }), [], back);
    expect(times(d)).toEqual(['2026-01-01T03:00:00.000Z', '2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    expect(d.notes.filter((n) => n.reason === 'MissedSchedule')).toHaveLength(1);
  });

  it('All under Forbid runs the missed times one after another: the oldest now, the next when it has ended', () => {
    const spec = { catchUp: { policy: 'All' as const }, concurrencyPolicy: 'Forbid' as const };
    const first = decideCron(cron(spec), [], back);
    expect(times(first)).toEqual(['2026-01-01T02:00:00.000Z']);
    const name = first.create[0]!.metadata.name!;
    const waiting = decideCron({ ...cron(spec), status: first.status }, [running(name)], back + 60_000);
    expect(waiting.create).toEqual([]);
    expect(waiting.notes).toEqual([]);
    const ended = { name, phase: 'Succeeded', scheduledMs: T('2026-01-01T02:00:00Z') };
    const next = decideCron({ ...cron(spec), status: waiting.status }, [ended], back + 120_000);
    expect(times(next)).toEqual(['2026-01-01T03:00:00.000Z']);
  });

  it('All under Replace runs only the latest: each would replace the one before it', () => {
    const d = decideCron(cron({ catchUp: { policy: 'All' }, concurrencyPolicy: 'Replace' }), [], back);
    expect(times(d)).toEqual(['2026-01-01T05:00:00.000Z']);
    expect(d.notes.some((n) => n.reason === 'ConcurrencyReplaced')).toBe(true);
  });

  it('All across the end of summer time in Berlin runs each real hour once, the repeated 02:00 twice', () => {
    const spec = { catchUp: { policy: 'All' as const }, timezone: 'Europe/Berlin' };
    // 2026-10-25: 03:00 CEST becomes 02:00 CET; the outage spans 01:30–04:30 local (CEST then CET).
    const d = decideCron(cron(spec, '2026-10-24T23:30:00Z'), [], T('2026-10-25T03:30:00Z'));
    expect(times(d)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ]);
    expect(new Set(d.create.map((w) => w.metadata.name)).size).toBe(4);
  });

  it('a daily 02:30 in Berlin missed over the start of summer time runs once that day, at 03:00 CEST', () => {
    const spec = { schedule: '30 2 * * *', catchUp: { policy: 'All' as const }, timezone: 'Europe/Berlin' };
    const d = decideCron(cron(spec, '2026-03-27T12:00:00Z'), [], T('2026-03-30T12:00:00Z'));
    expect(times(d)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });
});
