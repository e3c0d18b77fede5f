import { describe, expect, it } from 'vitest';
import {
  applyOutcome,
  backoffDelay,
  callOrder,
  DEFAULT_RETRY,
  nextStep,
  NO_PLUGIN_MESSAGE,
  startTask,
  type CallOutcome,
  type NextStep,
  type TaskState,
} from './call-machine.js';

const none = new Set<string>();
const tpl = (name?: string) => ({ plugin: name === undefined ? undefined : { [name]: {} } });
const reply = (node: object, requeue?: string): CallOutcome => ({
  kind: 'reply',
  reply: { node: node as never, ...(requeue ? { requeue } : {}) },
});

/** Drives the machine with a script of outcomes per plugin; returns the calls and reports. */
function drive(
  state: TaskState,
  script: Record<string, CallOutcome[]>,
  cache = new Set<string>(),
  start = 0,
): { calls: string[]; reports: unknown[]; final: NextStep; now: number } {
  const calls: string[] = [];
  const reports: unknown[] = [];
  let now = start;
  for (let i = 0; i < 100; i++) {
    const r = nextStep(state, now, cache);
    state = r.state;
    if (r.step.kind === 'done') return { calls, reports, final: r.step, now };
    if (r.step.kind === 'wait') {
      now = r.step.until;
      continue;
    }
    calls.push(`${r.step.plugin}@${now}`);
    const outcome = script[r.step.plugin]?.shift() ?? { kind: 'skip' };
    const a = applyOutcome(state, outcome, now, 0);
    if (a.notImplemented) cache.add(a.notImplemented);
    if (a.report) reports.push(a.report);
    state = a.state;
  }
  throw new Error('machine did not finish');
}

describe('call order', () => {
  it('calls the plugin named by the plugin key first, then the others in order', () => {
    expect(callOrder(['a', 'b', 'c'], 'b')).toEqual(['b', 'a', 'c']);
    expect(callOrder(['a', 'b'], 'zz')).toEqual(['a', 'b']);
    expect(startTask(tpl('c'), ['a', 'b', 'c']).order).toEqual(['c', 'a', 'b']);
    expect(startTask({ plugin: { a: {}, b: {} } }, ['a', 'b', 'c']).order).toEqual(['a', 'b', 'c']);
  });

  it('stops at the first plugin that returns a node', () => {
    const r = drive(startTask(tpl('b'), ['a', 'b', 'c']), { b: [reply({ phase: 'Succeeded', message: 'ok' })] });
    expect(r.calls).toEqual(['b@0']);
    expect(r.final).toEqual({ kind: 'done', result: { phase: 'Succeeded', message: 'ok' } });
  });
});

describe('reply rows', () => {
  it('`{}`/`null` (skip) → next plugin', () => {
    const r = drive(startTask(tpl(), ['a', 'b']), { a: [{ kind: 'skip' }], b: [reply({ phase: 'Succeeded' })] });
    expect(r.calls).toEqual(['a@0', 'b@0']);
    expect(r.final).toMatchObject({ result: { phase: 'Succeeded' } });
  });

  it('no plugin returned a node → Failed "no plugin executed the template"', () => {
    const r = drive(startTask(tpl('a'), ['a', 'b']), {});
    expect(r.calls).toEqual(['a@0', 'b@0']);
    expect(r.final).toEqual({ kind: 'done', result: { phase: 'Failed', message: NO_PLUGIN_MESSAGE } });
    expect(drive(startTask(tpl('a'), []), {}).final).toEqual({ kind: 'done', result: { phase: 'Failed', message: NO_PLUGIN_MESSAGE } });
  });

  it('404 → next plugin, and the plugin is never called again in this workflow', () => {
    const cache = new Set<string>();
    const first = drive(startTask(tpl(), ['a', 'b']), { a: [{ kind: 'notImplemented' }], b: [reply({ phase: 'Succeeded' })] }, cache);
    expect(first.calls).toEqual(['a@0', 'b@0']);
    expect([...cache]).toEqual(['a']);
    const second = drive(startTask(tpl('a'), ['a', 'b']), { b: [reply({ phase: 'Succeeded' })] }, cache);
    expect(second.calls).toEqual(['b@0']);
  });

  it('fatal → Failed with the message, no other plugin called', () => {
    const r = drive(startTask(tpl(), ['a', 'b']), { a: [{ kind: 'fatal', message: '500: database is down' }] });
    expect(r.calls).toEqual(['a@0']);
    expect(r.final).toEqual({ kind: 'done', result: { phase: 'Failed', message: '500: database is down' } });
  });

  it('transient → retried with doubling backoff, then fatal after 5 attempts', () => {
    const t: CallOutcome = { kind: 'transient', reason: 'connect ECONNREFUSED 127.0.0.1:1' };
    const r = drive(startTask(tpl(), ['a', 'b']), { a: [t, t, t, t, t] });
    expect(r.calls).toEqual(['a@0', 'a@1000', 'a@3000', 'a@7000', 'a@15000']);
    expect(r.final).toEqual({
      kind: 'done',
      result: { phase: 'Failed', message: 'plugin a failed 5 times: connect ECONNREFUSED 127.0.0.1:1' },
    });
  });

  it('transient then success → the node, and the failure count resets per plugin', () => {
    const t: CallOutcome = { kind: 'transient', reason: '503' };
    const r = drive(startTask(tpl(), ['a', 'b']), { a: [t, t, { kind: 'skip' }], b: [t, reply({ phase: 'Succeeded' })] });
    expect(r.calls).toEqual(['a@0', 'a@1000', 'a@3000', 'b@3000', 'b@4000']);
    expect(r.final).toMatchObject({ result: { phase: 'Succeeded' } });
  });

  it('jitter adds up to 20 % to each wait', () => {
    expect(backoffDelay(1, 0)).toBe(1000);
    expect(backoffDelay(1, 0.999)).toBeCloseTo(1199.8);
    expect(backoffDelay(3, 0.5)).toBe(4400);
    expect(backoffDelay(2, 0, { ...DEFAULT_RETRY, baseDelayMs: 10 })).toBe(20);
  });

  it('requeue with Running → interim report, same plugin called again after the duration, then Succeeded', () => {
    const r = drive(startTask(tpl('b'), ['a', 'b']), {
      b: [
        reply({ phase: 'Running', message: 'working', progress: '1/3' }, '2s'),
        reply({ phase: 'Pending', progress: '2/3' }, '500ms'),
        reply({ phase: 'Succeeded', message: 'done', progress: '3/3', outputs: { parameters: [{ name: 'x', value: '1' }] } }, '1m'),
      ],
    });
    expect(r.calls).toEqual(['b@0', 'b@2000', 'b@2500']);
    expect(r.reports).toEqual([
      { phase: 'Running', message: 'working', progress: '1/3' },
      { phase: 'Pending', progress: '2/3' },
      { phase: 'Succeeded', message: 'done', progress: '3/3', outputs: { parameters: [{ name: 'x', value: '1' }] } },
    ]);
    expect(r.final).toMatchObject({ result: { phase: 'Succeeded' } });
  });

  it('a Succeeded reply ends the task even with a requeue', () => {
    const r = drive(startTask(tpl('a'), ['a']), { a: [reply({ phase: 'Succeeded' }, '10s')] });
    expect(r.calls).toEqual(['a@0']);
    expect(r.now).toBe(0);
  });

  it('an invalid requeue is fatal with a clear message', () => {
    for (const bad of ['soon', '10', '-5s', '5 s']) {
      const r = drive(startTask(tpl('a'), ['a']), { a: [reply({ phase: 'Running' }, bad)] });
      expect(r.final.kind).toBe('done');
      const msg = (r.final as { result: { message: string } }).result.message;
      expect(msg).toMatch(
        new RegExp(`^plugin a replied with an invalid requeue: ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
      expect((r.final as { result: { phase: string } }).result.phase).toBe('Failed');
    }
  });

  it('a node without a valid phase is fatal', () => {
    const r = drive(startTask(tpl('a'), ['a']), { a: [reply({ message: 'no phase' })] });
    expect(r.final).toEqual({
      kind: 'done',
      result: {
        phase: 'Failed',
        message: 'plugin a replied with an invalid result: node.phase is required: one of Pending, Running, Succeeded, Failed, Error',
      },
    });
    const r2 = drive(startTask(tpl('a'), ['a']), { a: [reply({ phase: 'Done' })] });
    expect(r2.final).toMatchObject({
      result: {
        phase: 'Failed',
        message: expect.stringContaining('node.phase must be one of Pending, Running, Succeeded, Failed, Error, got "Done"'),
      },
    });
  });

  it('an invalid node is fatal even with a requeue, and nothing of it is reported', () => {
    const r = drive(startTask(tpl('a'), ['a']), { a: [reply({ phase: 'Running', outputs: [] }, '1s')] });
    expect(r.calls).toEqual(['a@0']);
    expect(r.reports).toEqual([
      { phase: 'Failed', message: 'plugin a replied with an invalid result: node.outputs must be an object, got a list' },
    ]);
  });

  it('Running without requeue is reported and the agent stops calling', () => {
    const r = drive(startTask(tpl('a'), ['a']), { a: [reply({ phase: 'Running', message: 'handed off' })] });
    expect(r.calls).toEqual(['a@0']);
    expect(r.final).toEqual({ kind: 'done', result: { phase: 'Running', message: 'handed off' } });
  });

  it('waits without calling before the wake-up time', () => {
    let s = startTask(tpl('a'), ['a']);
    s = applyOutcome(s, { kind: 'transient', reason: 'x' }, 100, 0).state;
    expect(nextStep(s, 500, none).step).toEqual({ kind: 'wait', until: 1100 });
    expect(nextStep(s, 1100, none).step).toEqual({ kind: 'call', plugin: 'a', attempt: 2 });
  });
});
