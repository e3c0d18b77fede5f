import { describe, expect, it } from 'vitest';
import type { CronWorkflow } from '../api/index.js';
import { decideCron, type CronChild } from './decide.js';

const T = (iso: string) => Date.parse(iso);

function cron(spec: Partial<CronWorkflow['spec']> = {}, status?: CronWorkflow['status']): CronWorkflow {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'CronWorkflow',
    metadata: { name: 'nightly', namespace: 'ns', uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z', labels: { team: 'a' } },
    spec: {
      schedule: '0 * * * *',
      workflowSpec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine', command: ['true'] } }] },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}
const child = (name: string, phase: string | undefined, scheduled: string): CronChild => ({
  name,
  ...(phase ? { phase } : {}),
  scheduledMs: T(scheduled),
});

describe('decideCron', () => {
  it('starts the run of a due time, named by its unix seconds, owned and labelled; asks to look again at the next time', () => {
    const d = decideCron(cron({ workflowMetadata: { labels: { kind: 'report' } } }), [], T('2026-01-01T01:00:03Z'));
    expect(d.create[0]?.metadata).toMatchObject({
      name: `nightly-${T('2026-01-01T01:00:00Z') / 1000}`,
      namespace: 'ns',
      labels: { kind: 'report', 'workflows.plugflow.io/cron-workflow': 'nightly' },
      annotations: { 'workflows.plugflow.io/scheduled-time': '2026-01-01T01:00:00.000Z' },
      ownerReferences: [{ kind: 'CronWorkflow', name: 'nightly', uid: 'u1', controller: true }],
    });
    expect(d.status).toMatchObject({
      lastScheduledTime: '2026-01-01T01:00:00.000Z',
      active: [{ name: `nightly-${T('2026-01-01T01:00:00Z') / 1000}` }],
    });
    expect(d.requeueAtMs).toBe(T('2026-01-01T02:00:00Z'));
  });

  it('handles each scheduled time once: the same decision again creates nothing', () => {
    const first = decideCron(cron(), [], T('2026-01-01T01:00:03Z'));
    const again = decideCron(
      cron({}, first.status),
      [child(first.create[0]!.metadata.name!, 'Running', '2026-01-01T01:00:00Z')],
      T('2026-01-01T01:00:04Z'),
    );
    expect(again.create).toEqual([]);
  });

  it('after an outage runs only the latest missed time, or none when it is past startingDeadlineSeconds', () => {
    const status = { lastScheduledTime: '2026-01-01T01:00:00Z' };
    const late = decideCron(cron({}, status), [], T('2026-01-01T05:10:00Z'));
    expect(late.create[0]?.metadata.annotations?.['workflows.plugflow.io/scheduled-time']).toBe('2026-01-01T05:00:00.000Z');
    const missed = decideCron(cron({ startingDeadlineSeconds: 60 }, status), [], T('2026-01-01T05:10:00Z'));
    expect(missed.create).toEqual([]);
    expect(missed.status.lastScheduledTime).toBe('2026-01-01T05:00:00.000Z');
    expect(missed.notes[0]).toMatchObject({ type: 'Warning', reason: 'MissedSchedule' });
  });

  it('Forbid skips a run while one is active; Replace stops the active ones and starts the new one', () => {
    const status = { lastScheduledTime: '2026-01-01T01:00:00Z', active: [{ name: 'nightly-1', namespace: 'ns' }] };
    const running = [child('nightly-1', 'Running', '2026-01-01T01:00:00Z')];
    const forbid = decideCron(cron({ concurrencyPolicy: 'Forbid' }, status), running, T('2026-01-01T02:00:01Z'));
    expect(forbid.create).toEqual([]);
    expect(forbid.notes[0]).toMatchObject({ reason: 'ConcurrencyForbidden' });
    const replace = decideCron(cron({ concurrencyPolicy: 'Replace' }, status), running, T('2026-01-01T02:00:01Z'));
    expect(replace.stop).toEqual(['nightly-1']);
    expect(replace.create).toHaveLength(1);
    const allow = decideCron(cron({}, status), running, T('2026-01-01T02:00:01Z'));
    expect(allow.status.active?.map((a) => a.name)).toEqual(['nightly-1', `nightly-${T('2026-01-01T02:00:00Z') / 1000}`]);
  });

  it('counts each ended run once and stops by the stop strategy', () => {
    const status = {
      lastScheduledTime: '2026-01-01T01:00:00Z',
      active: [
        { name: 'a', namespace: 'ns' },
        { name: 'b', namespace: 'ns' },
      ],
      failed: 1,
    };
    const d = decideCron(
      cron({ stopStrategy: { expression: 'cronworkflow.failed >= 2' } }, status),
      [child('a', 'Failed', '2026-01-01T00:00:00Z'), child('b', 'Succeeded', '2026-01-01T01:00:00Z')],
      T('2026-01-01T01:30:00Z'),
    );
    expect(d.status).toMatchObject({ failed: 2, succeeded: 1, active: [], phase: 'Stopped' });
    expect(d.requeueAtMs).toBeUndefined();
    const later = decideCron(cron({ stopStrategy: { expression: 'cronworkflow.failed >= 2' } }, d.status), [], T('2026-01-01T03:00:00Z'));
    expect(later.create).toEqual([]);
    expect(later.status.failed).toBe(2);
  });

  it('starts nothing while suspended, and skips a time whose `when` is false', () => {
    expect(decideCron(cron({ suspend: true }), [], T('2026-01-01T01:00:03Z')).create).toEqual([]);
    const d = decideCron(cron({ when: "{{cronworkflow.labels.team}} == 'b'" }), [], T('2026-01-01T01:00:03Z'));
    expect(d.create).toEqual([]);
    expect(d.notes[0]).toMatchObject({ reason: 'WhenFalse' });
    expect(decideCron(cron({ when: "{{cronworkflow.labels.team}} == 'a'" }), [], T('2026-01-01T01:00:03Z')).create).toHaveLength(1);
  });

  it('keeps the newest finished runs within the history limits and deletes the rest', () => {
    const runs = [1, 2, 3, 4, 5].map((h) => child(`ok-${h}`, 'Succeeded', `2026-01-01T0${h}:00:00Z`));
    const fails = [1, 2].map((h) => child(`bad-${h}`, 'Error', `2026-01-01T0${h}:30:00Z`));
    const d = decideCron(
      cron({ successfulJobsHistoryLimit: 2 }),
      [...runs, ...fails, child('live', 'Running', '2026-01-01T06:00:00Z')],
      T('2026-01-01T00:30:00Z'),
    );
    expect(d.delete).toEqual(['bad-1', 'ok-1', 'ok-2', 'ok-3']);
  });

  it('an invalid schedule is a SpecError condition and an Event, once', () => {
    const d = decideCron(cron({ schedule: 'every day' }), [], T('2026-01-01T01:00:03Z'));
    expect(d.create).toEqual([]);
    expect(d.status.conditions).toEqual([
      { type: 'SpecError', status: 'True', message: expect.stringContaining('spec.schedule: "every day" is not a cron schedule') },
    ]);
    expect(d.notes).toHaveLength(1);
    expect(decideCron(cron({ schedule: 'every day' }, d.status), [], T('2026-01-01T01:00:04Z')).notes).toEqual([]);
  });
});

describe('decideCron: bounded per object', () => {
  it('a stored CronWorkflow with thousands of schedules is a SpecError naming the limit, not thousands of parses', () => {
    const schedules = Array.from({ length: 10_000 }, (_, i) => `${i % 60} * * * *`);
    const d = decideCron(cron({ schedule: undefined, schedules }), [], T('2026-01-01T01:00:03Z'));
    expect(d.create).toEqual([]);
    expect(d.status.conditions).toEqual([
      { type: 'SpecError', status: 'True', message: expect.stringMatching(/^spec\.schedules: at most 20 schedules .* has 10000/) },
    ]);
    expect(d.notes).toMatchObject([{ type: 'Warning', reason: 'SpecError' }]);
  });

  it('twenty per-second schedules after a year-long outage decide in one look each', () => {
    const schedules = Array.from({ length: 20 }, (_, i) => `${i} * * * * *`);
    const d = decideCron(
      cron({ schedule: undefined, schedules }, { lastScheduledTime: '2025-01-01T00:00:00Z' }),
      [],
      T('2026-01-01T01:00:30.5Z'),
    );
    expect(d.status.lastScheduledTime).toBe('2026-01-01T01:00:19.000Z');
    expect(d.requeueAtMs).toBe(T('2026-01-01T01:01:00Z'));
  });
});
