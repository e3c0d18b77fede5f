/**
 * Backfills, pure: planning a range (bounds, idempotency, overlaps, time zones) and the
 * controller's decision of which runs start — with fixed clocks.
 */
import { describe, expect, it } from 'vitest';
import type { Backfill, CronWorkflow } from '../api/index.js';
import { backfillName, decideBackfills, planBackfill, type BackfillChild } from './backfill.js';
import { schedulesOf } from './decide.js';

const T = (iso: string) => Date.parse(iso);
const NOW = T('2026-12-07T12:00:00Z');

function cron(spec: Partial<CronWorkflow['spec']> = {}, status?: CronWorkflow['status']): CronWorkflow {
  return {
    metadata: { name: 'daily', namespace: 'ns', uid: 'u1', creationTimestamp: '2026-12-01T00:00:00Z' },
    spec: {
      schedule: '0 6 * * *',
      workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine', command: ['true'] } }] },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}
const schedulesFor = (c: CronWorkflow) => {
  const s = schedulesOf(c);
  if (!s.ok) throw new Error(s.error);
  return s.schedules;
};
const plan = (c: CronWorkflow, from: string, to: string, parallel?: number) =>
  planBackfill(c, schedulesFor(c), { from, to, ...(parallel ? { parallel } : {}) }, NOW);

describe('planning a backfill', () => {
  it('counts the scheduled times in [from, to], both ends included, and names the backfill by its range', () => {
    const p = plan(cron(), '2026-11-01T06:00:00Z', '2026-11-30T06:00:00Z', 3);
    expect(p).toMatchObject({ ok: true, runs: 30, covered: 0, existing: false });
    if (!p.ok) return;
    expect(p.entry).toEqual({
      name: backfillName(T('2026-11-01T06:00:00Z'), T('2026-11-30T06:00:00Z')),
      from: '2026-11-01T06:00:00.000Z',
      to: '2026-11-30T06:00:00.000Z',
      parallel: 3,
    });
  });

  it('reads the schedule in its time zone, with the range given in any offset', () => {
    const c = cron({ timezone: 'America/New_York' });
    // 06:00 in New York is 11:00 UTC in November (EST); 2026-11-01 is the end of EDT (10:00 UTC).
    const p = plan(c, '2026-10-31T00:00:00-04:00', '2026-11-02T23:59:59-05:00');
    expect(p).toMatchObject({ ok: true, runs: 3 });
    const d = decideBackfills({ ...c, spec: { ...c.spec, backfills: [(p as { entry: Backfill }).entry] } }, schedulesFor(c), [], NOW);
    // parallel 1: the first only; its time is 06:00 EDT.
    expect(d.create.map((w) => w.metadata.annotations?.['workflows.plugflow.io/scheduled-time'])).toEqual(['2026-10-31T10:00:00.000Z']);
    expect(d.status[0]).toMatchObject({ total: 3, started: 1, next: '2026-11-01T11:00:00.000Z', phase: 'Running' });
  });

  it('asking again for the same range answers the first backfill and adds nothing', () => {
    const first = plan(cron(), '2026-11-01T00:00:00Z', '2026-11-10T00:00:00Z');
    if (!first.ok) throw new Error(first.error);
    const again = plan(cron({ backfills: [first.entry] }), '2026-11-01T00:00:00Z', '2026-11-10T00:00:00Z');
    expect(again).toMatchObject({ ok: true, existing: true, runs: 0, entry: first.entry });
  });

  it('an overlapping range counts the times an earlier backfill covers, and starts only the others', () => {
    const first = plan(cron(), '2026-11-01T00:00:00Z', '2026-11-10T00:00:00Z');
    if (!first.ok) throw new Error(first.error);
    const c = cron({ backfills: [first.entry] });
    const wider = plan(c, '2026-11-05T00:00:00Z', '2026-11-15T00:00:00Z');
    expect(wider).toMatchObject({ ok: true, existing: false, runs: 5, covered: 5 });
  });

  it('refuses, naming the field: a time without its zone, a reversed range, a future end, parallel out of bounds', () => {
    expect(plan(cron(), '2026-11-01', '2026-11-02T00:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('from: "2026-11-01"'),
    });
    expect(plan(cron(), '2026-11-01T00:00:00', '2026-11-02T00:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('with its zone'),
    });
    expect(plan(cron(), '2026-11-02T00:00:00Z', '2026-11-01T00:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('is before from'),
    });
    expect(plan(cron(), '2026-11-01T00:00:00Z', '2027-01-01T00:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('is in the future'),
    });
    expect(plan(cron(), '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z', 1000)).toMatchObject({
      ok: false,
      error: expect.stringContaining('parallel'),
    });
    expect(plan(cron(), '2026-11-01T07:00:00Z', '2026-11-01T08:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('names no time'),
    });
  });

  it('refuses a range of more than 1000 times, saying where the first 1000 end, after at most 1001 looks', () => {
    const p = plan(cron({ schedule: '@every 1s' }), '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
    expect(p).toMatchObject({ ok: false, error: expect.stringContaining('more than 1000 scheduled times') });
    expect((p as { error: string }).error).toContain('end at 2025-01-01T00:16:39.000Z');
  });

  it('makes room in a full list by dropping the oldest complete backfill, and refuses when all 20 still run', () => {
    const entries: Backfill[] = Array.from({ length: 20 }, (_, i) => ({
      name: `bf-${i}`,
      from: `2026-0${1 + (i % 9)}-01T00:00:00Z`,
      to: `2026-0${1 + (i % 9)}-02T00:00:00Z`,
    }));
    const allComplete = entries.map((e) => ({ name: e.name, total: 1, started: 1, phase: 'Complete' as const }));
    const roomy = plan(cron({ backfills: entries }, { backfills: allComplete }), '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z');
    expect(roomy).toMatchObject({ ok: true, drop: ['bf-0'] });
    const busy = allComplete.map((s) => ({ ...s, phase: 'Running' as const }));
    expect(plan(cron({ backfills: entries }, { backfills: busy }), '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z')).toMatchObject({
      ok: false,
      error: expect.stringContaining('wait for one to complete'),
    });
  });
});

describe('the controller starting a backfill', () => {
  const entry: Backfill = { name: 'bf-nov', from: '2026-11-01T00:00:00Z', to: '2026-11-05T23:59:59Z', parallel: 2 };
  const c = (status?: CronWorkflow['status'], spec: Partial<CronWorkflow['spec']> = {}) => cron({ backfills: [entry], ...spec }, status);
  const decide = (x: CronWorkflow, children: BackfillChild[] = [], now = NOW) => decideBackfills(x, schedulesFor(x), children, now);

  it('starts `parallel` runs, oldest first, named as the schedule names them and labelled with the backfill and the time', () => {
    const d = decide(c());
    expect(d.create.map((w) => w.metadata.name)).toEqual([
      `daily-${T('2026-11-01T06:00:00Z') / 1000}`,
      `daily-${T('2026-11-02T06:00:00Z') / 1000}`,
    ]);
    expect(d.create[0]!.metadata.labels).toMatchObject({
      'workflows.plugflow.io/cron-workflow': 'daily',
      'workflows.plugflow.io/backfill': 'bf-nov',
      'workflows.plugflow.io/scheduled-time': '20261101T060000Z',
    });
    expect(d.status[0]).toMatchObject({ name: 'bf-nov', total: 5, started: 2, next: '2026-11-03T06:00:00.000Z', phase: 'Running' });
  });

  it('starts the next when one has ended, and completes once every run has started and ended', () => {
    const first = decide(c());
    const [a, b] = first.create.map((w) => w.metadata.name!);
    const waiting = decide(c({ backfills: first.status }), [
      { name: a!, phase: 'Running' },
      { name: b!, phase: 'Running' },
    ]);
    expect(waiting.create).toEqual([]);
    const one = decide(c({ backfills: first.status }), [
      { name: a!, phase: 'Succeeded' },
      { name: b!, phase: 'Running' },
    ]);
    expect(one.create).toHaveLength(1);
    let status = one.status;
    const done: BackfillChild[] = [];
    for (let i = 0; i < 5 && status[0]!.phase === 'Running'; i++) {
      for (const n of status[0]!.running ?? []) done.push({ name: n, phase: 'Succeeded' });
      status = decide(c({ backfills: status }), done).status;
    }
    expect(status[0]).toMatchObject({ phase: 'Complete', started: 5, total: 5 });
    expect(decide(c({ backfills: status }), done).create).toEqual([]);
  });

  it('a run just created and not yet in the cache still counts against parallel for a minute', () => {
    const first = decide(c());
    expect(decide(c({ backfills: first.status }), [], NOW + 5_000).create).toEqual([]);
    expect(decide(c({ backfills: first.status }), [], NOW + 120_000).create).toHaveLength(2);
  });

  it('starts nothing while the CronWorkflow is suspended', () => {
    expect(decide(c(undefined, { suspend: true })).create).toEqual([]);
  });

  it('a second backfill over part of the first leaves those times to the first', () => {
    const later: Backfill = { name: 'bf-wide', from: '2026-11-04T00:00:00Z', to: '2026-11-07T23:59:59Z', parallel: 10 };
    const x = cron({ backfills: [entry, later] });
    const d = decideBackfills(x, schedulesFor(x), [], NOW);
    expect(d.status[1]).toMatchObject({ name: 'bf-wide', total: 2 });
    expect(d.create.filter((w) => w.metadata.labels?.['workflows.plugflow.io/backfill'] === 'bf-wide').map((w) => w.metadata.name)).toEqual(
      [`daily-${T('2026-11-06T06:00:00Z') / 1000}`, `daily-${T('2026-11-07T06:00:00Z') / 1000}`],
    );
  });
});
