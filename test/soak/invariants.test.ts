/**
 * The soak's own logic, without a cluster: the invariant checker on hand-made final states (so a
 * broken checker cannot pass a broken system), the chaos plan, the PRNG, and the RESULTS.md
 * section writer.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowTaskSet } from '../../src/api/index.js';
import { updateResultsSection } from '../../bench/run-all.js';
import { logTicks, niceTicks } from '../../bench/chart.js';
import { CHAOS_KINDS, planChaos } from './chaos.js';
import { EVENT_LABEL, SOAK_LABEL } from './designs.js';
import { checkInvariants, memoryGrowth, type FinalState } from './invariants.js';
import { Ledger } from './ledger.js';
import { Prng } from './prng.js';

const wf = (
  name: string,
  phase: string | undefined,
  labels: Record<string, string>,
  extra: Partial<Workflow['status']> = {},
): Workflow => ({
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name, namespace: 'soak', labels, creationTimestamp: new Date().toISOString() },
  spec: {},
  ...(phase ? { status: { phase: phase as 'Succeeded', ...extra } } : {}),
});
const empty = (): FinalState => ({ workflows: [], pods: [], taskSets: [] });

describe('checkInvariants', () => {
  it('accepts a clean run', () => {
    const ledger = new Ledger();
    ledger.events.push({ id: 'e-0', kind: 'match', sentAt: 1000, status: 200 }, { id: 'e-1', kind: 'nomatch', sentAt: 1100, status: 200 });
    ledger.submissions.set('soak/c-0', {
      name: 'c-0',
      namespace: 'soak',
      design: 'container-fail',
      expected: 'Failed',
      tries: 1,
      accepted: true,
      errors: [],
    });
    const state = empty();
    state.workflows.push(
      wf('ev-0', 'Succeeded', { [EVENT_LABEL]: 'e-0', [SOAK_LABEL]: 'event' }),
      wf('c-0', 'Failed', { [SOAK_LABEL]: 'container-fail' }),
    );
    const r = checkInvariants(ledger, state, [], []);
    expect(r.violations).toEqual([]);
    expect(r.events.delivered).toBe(1);
  });

  it('flags a lost event, a duplicate, a workflow from a refused event and a wrong phase', () => {
    const ledger = new Ledger();
    ledger.events.push(
      { id: 'lost', kind: 'match', sentAt: 1000, status: 200 },
      { id: 'twice', kind: 'match', sentAt: 1000, status: 200 },
      { id: 'refused', kind: 'match', sentAt: 1000, status: 503 },
    );
    ledger.submissions.set('soak/c-1', {
      name: 'c-1',
      namespace: 'soak',
      design: 'container',
      expected: 'Succeeded',
      tries: 1,
      accepted: true,
      errors: [],
    });
    const state = empty();
    state.workflows.push(
      wf('a', 'Succeeded', { [EVENT_LABEL]: 'twice' }),
      wf('b', 'Succeeded', { [EVENT_LABEL]: 'twice' }),
      wf('c', 'Succeeded', { [EVENT_LABEL]: 'refused' }),
      wf('c-1', 'Failed', { [SOAK_LABEL]: 'container' }, { message: 'boom' }),
      wf('stranger', 'Succeeded', {}),
    );
    const v = checkInvariants(ledger, state, [], []).violations.join('\n');
    expect(v).toContain('event lost was accepted');
    expect(v).toContain('event twice (match, answered 200) produced 2 workflows');
    expect(v).toContain('event refused (match, answered 503) should produce no workflow');
    expect(v).toContain('soak/c-1 (container) ended Failed, expected Succeeded');
    expect(v).toContain('stranger exists but the soak never submitted it');
  });

  it('excuses no accepted event, whatever was killed; an answer that leaves the event open allows zero or one workflow', () => {
    const ledger = new Ledger();
    ledger.chaos.push({ kind: 'server-kill', at: 9000, signalAt: 10_000, detail: '' });
    ledger.events.push(
      { id: 'in-queue', kind: 'match', sentAt: 9500, status: 200 },
      { id: 'no-answer', kind: 'match', sentAt: 9600, status: 0 },
      { id: 'slow', kind: 'match', sentAt: 9700, status: 202 },
      { id: 'bus-down', kind: 'match', sentAt: 9800, status: 503 },
    );
    const r = checkInvariants(ledger, empty(), [], []);
    expect(r.events).toMatchObject({ lost: 1, open: 2 });
    expect(r.violations).toEqual(['event in-queue was accepted (200 at 9.5s) but produced no workflow']);
    ledger.eventBus = true;
    expect(checkInvariants(ledger, empty(), [], []).events).toMatchObject({ lost: 1, open: 3 });
  });

  it('flags orphaned pods, agent pods and TaskSet entries left', () => {
    const ledger = new Ledger();
    ledger.submissions.set('soak/p-0', {
      name: 'p-0',
      namespace: 'soak',
      design: 'plugin-fail',
      expected: 'Failed',
      tries: 1,
      accepted: true,
      errors: [],
    });
    const state = empty();
    state.workflows.push(
      wf('p-0', 'Failed', { [SOAK_LABEL]: 'plugin-fail' }, { nodes: { n1: { id: 'n1', name: 'p-0', phase: 'Failed' } } as never }),
    );
    const pod = (name: string, wfName: string, labels: Record<string, string> = {}, phase = 'Running'): V1Pod => ({
      metadata: { name, namespace: 'soak', labels: { 'workflows.plugflow.io/workflow': wfName, ...labels } },
      status: { phase },
    });
    state.pods.push(pod('orphan', 'gone'), pod('p-0-agent', 'p-0', { 'workflows.plugflow.io/component': 'agent' }), pod('p-0-step', 'p-0'));
    const ts = (name: string, tasks: object, nodes: object): WorkflowTaskSet =>
      ({
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'WorkflowTaskSet',
        metadata: { name, namespace: 'soak' },
        spec: { tasks },
        status: { nodes },
      }) as never;
    state.taskSets.push(ts('p-0', { n1: {} }, { n1: { phase: 'Failed' } }), ts('gone', {}, {}));
    const r = checkInvariants(ledger, state, [], []);
    const v = r.violations.join('\n');
    expect(v).toContain('pod soak/orphan is orphaned');
    expect(v).toContain('agent pod soak/p-0-agent still exists');
    expect(v).toContain('pod soak/p-0-step is Running but its workflow ended Failed');
    expect(v).toContain('TaskSet soak/p-0: 1 spec.tasks entries left');
    expect(v).toContain('TaskSet soak/gone is orphaned');
    expect(v).toContain('1 TaskSet status.nodes entries of 1 finished workflows were never removed');
  });

  it('tells levelled memory from growth', () => {
    const series = (f: (i: number) => number) =>
      Array.from({ length: 20 }, (_, i) => ({ at: i * 1000, controller: f(i), driver: 0, controllerIncarnation: 1, serverIncarnation: 1 }));
    expect(
      memoryGrowth(
        'controller',
        series(() => 200_000),
      ).bounded,
    ).toBe(true);
    expect(
      memoryGrowth(
        'controller',
        series((i) => 200_000 + i * 40_000),
      ).bounded,
    ).toBe(false);
  });
});

describe('planChaos and Prng', () => {
  it('schedules every kind, in order of time, reproducibly', () => {
    const a = planChaos(new Prng(1), 75_000, 6);
    expect(a.map((p) => p.kind).sort()).toEqual([...CHAOS_KINDS].sort());
    expect(a.map((p) => p.at)).toEqual([...a.map((p) => p.at)].sort((x, y) => x - y));
    expect(planChaos(new Prng(1), 75_000, 6)).toEqual(a);
    expect(planChaos(new Prng(2), 75_000, 6)).not.toEqual(a);
  });

  it('draws the same numbers from the same seed', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, () => new Prng(seed).fork('x').int(0, 1000));
    expect(draw(5)).toEqual(draw(5));
    const r = new Prng(9);
    for (let i = 0; i < 1000; i++) expect(r.int(3, 7)).toBeGreaterThanOrEqual(3);
  });
});

describe('RESULTS.md sections and chart axes', () => {
  it('replaces a section in place and keeps the others', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'plugflow-results-')), 'RESULTS.md');
    updateResultsSection('a', 'A', 'one', path);
    updateResultsSection('b', 'B', 'two', path);
    updateResultsSection('a', 'A', 'three', path);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('three');
    expect(text).not.toContain('one');
    expect(text.indexOf('## A')).toBeLessThan(text.indexOf('## B'));
  });

  it('picks round ticks', () => {
    expect(niceTicks(9)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(logTicks(3, 2000)).toEqual([1, 10, 100, 1000, 10_000]);
  });
});
