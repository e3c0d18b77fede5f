import { describe, expect, it } from 'vitest';
import {
  bound,
  boundResult,
  checkReply,
  MAX_ARTIFACT_DEPTH,
  MAX_MESSAGE_LENGTH,
  MAX_OUTPUTS_BYTES,
  type CheckedReply,
} from './reply-validation.js';

const check = (node: unknown, requeue?: unknown): CheckedReply => checkReply('hello', requeue === undefined ? { node } : { node, requeue });
const failure = (node: unknown, requeue?: unknown): string => {
  const r = check(node, requeue);
  expect(r.ok).toBe(false);
  expect(r.result.phase).toBe('Failed');
  return r.result.message!;
};
const invalid = (detail: string) => `plugin hello replied with an invalid result: ${detail}`;

describe('checkReply: valid replies are rebuilt from their checked fields', () => {
  it('keeps phase, message, progress and outputs', () => {
    const node = {
      phase: 'Succeeded',
      message: 'done',
      progress: '3/3',
      outputs: { parameters: [{ name: 'x', value: '1' }], artifacts: [{ name: 'a', raw: { data: 'hi' } }], result: 'r', exitCode: '0' },
    };
    expect(check(node)).toEqual({ ok: true, result: node });
  });

  it('turns AnyString values into strings and drops fields the contract does not have', () => {
    const r = check({
      phase: 'Succeeded',
      extra: { deep: 1 },
      outputs: {
        parameters: [
          { name: 'n', value: 3, valueFrom: { path: '/x' } },
          { name: 'b', value: true },
          { name: 'f', value: 1e21 },
          { name: 'none' },
        ],
        other: 1,
      },
    });
    expect(r).toEqual({
      ok: true,
      result: {
        phase: 'Succeeded',
        outputs: {
          parameters: [
            { name: 'n', value: '3' },
            { name: 'b', value: 'true' },
            { name: 'f', value: '1000000000000000000000' },
            { name: 'none' },
          ],
        },
      },
    });
  });

  it('null and empty optional fields mean "none"', () => {
    expect(check({ phase: 'Running', message: null, progress: '', outputs: null }, null)).toEqual({
      ok: true,
      result: { phase: 'Running' },
    });
    expect(check({ phase: 'Running', message: '' }, '')).toEqual({ ok: true, result: { phase: 'Running' } });
    expect(check({ phase: 'Succeeded', outputs: {} })).toEqual({ ok: true, result: { phase: 'Succeeded' } });
  });

  it('parses the requeue', () => {
    expect(check({ phase: 'Running' }, '1m30s')).toEqual({ ok: true, result: { phase: 'Running' }, requeueMs: 90_000 });
    expect(check({ phase: 'Pending' }, '0s')).toMatchObject({ ok: true, requeueMs: 0 });
  });

  it('accepts every phase a plugin may reply, and progress N/M with N ≤ M', () => {
    for (const phase of ['Pending', 'Running', 'Succeeded', 'Failed', 'Error'])
      expect(check({ phase, message: 'some words' }).ok).toBe(true);
    for (const progress of ['0/1', '1/1', '7/10', '000/5']) expect(check({ phase: 'Running', progress }).ok, progress).toBe(true);
  });

  it('never reads a field from the prototype', () => {
    expect(failure(JSON.parse('{"__proto__": {"phase": "Succeeded"}}'))).toBe(
      invalid('node.phase is required: one of Pending, Running, Succeeded, Failed, Error'),
    );
    expect(check(JSON.parse('{"phase":"Succeeded","outputs":{"__proto__":{"result":5}}}'))).toEqual({
      ok: true,
      result: { phase: 'Succeeded' },
    });
  });
});

describe('checkReply: a reply that breaks the contract fails the task, naming the problem', () => {
  it.each([
    [[], 'node must be an object, got a list'],
    ['x', 'node must be an object, got "x"'],
    [5, 'node must be an object, got number 5'],
    [{}, 'node.phase is required: one of Pending, Running, Succeeded, Failed, Error'],
    [{ phase: 'succeeded' }, 'node.phase must be one of Pending, Running, Succeeded, Failed, Error, got "succeeded"'],
    [{ phase: 'Skipped' }, 'node.phase must be one of Pending, Running, Succeeded, Failed, Error, got "Skipped"'],
    [{ phase: ['Succeeded'] }, 'node.phase must be one of Pending, Running, Succeeded, Failed, Error, got a list'],
    [{ phase: 'Succeeded', outputs: [] }, 'node.outputs must be an object, got a list'],
    [{ phase: 'Succeeded', outputs: 5 }, 'node.outputs must be an object, got number 5'],
    [{ phase: 'Succeeded', outputs: 'str' }, 'node.outputs must be an object, got "str"'],
    [{ phase: 'Succeeded', outputs: { parameters: 'x' } }, 'node.outputs.parameters must be a list of {name, value}, got "x"'],
    [{ phase: 'Succeeded', outputs: { parameters: ['x'] } }, 'node.outputs.parameters[0] must be an object {name, value}, got "x"'],
    [{ phase: 'Succeeded', outputs: { parameters: [{ value: 'no name' }] } }, 'node.outputs.parameters[0].name is required'],
    [
      { phase: 'Succeeded', outputs: { parameters: [{ name: 'a', value: {} }] } },
      'node.outputs.parameters[0].value must be a string, number or boolean, got an object',
    ],
    [{ phase: 'Succeeded', outputs: { artifacts: {} } }, 'node.outputs.artifacts must be a list of artifacts, got an object'],
    [{ phase: 'Succeeded', outputs: { artifacts: [{ path: '/x' }] } }, 'node.outputs.artifacts[0].name is required'],
    [{ phase: 'Succeeded', outputs: { result: { a: 1 } } }, 'node.outputs.result must be a string, got an object'],
    [{ phase: 'Succeeded', outputs: { exitCode: [] } }, 'node.outputs.exitCode must be a string, got a list'],
    [{ phase: 'Failed', message: { why: 'x' } }, 'node.message must be a string, got an object'],
    [{ phase: 'Succeeded', message: 42 }, 'node.message must be a string, got number 42'],
    [
      { phase: 'Running', progress: 'half' },
      'node.progress must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got "half"',
    ],
    [
      { phase: 'Running', progress: '3/2' },
      'node.progress must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got "3/2"',
    ],
    [
      { phase: 'Running', progress: '0/0' },
      'node.progress must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got "0/0"',
    ],
    [
      { phase: 'Running', progress: 1 },
      'node.progress must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got number 1',
    ],
  ])('%j → %s', (node, detail) => {
    expect(failure(node)).toBe(invalid(detail));
  });

  it('names every problem at once (up to five)', () => {
    expect(failure({ phase: 'Bogus', message: 1, progress: 'x' })).toBe(
      invalid(
        'node.phase must be one of Pending, Running, Succeeded, Failed, Error, got "Bogus"; node.message must be a string, got number 1; ' +
          'node.progress must be done/total with 0 ≤ done ≤ total and total ≥ 1 (for example 1/3), got "x"',
      ),
    );
    const many = failure({ phase: 'Succeeded', outputs: { parameters: Array.from({ length: 8 }, () => ({})) } });
    expect(many).toMatch(/parameters\[4\]\.name is required \(and 3 more problems\)$/);
  });

  it('an invalid requeue', () => {
    expect(failure({ phase: 'Running' }, 'banana')).toMatch(
      /^plugin hello replied with an invalid requeue: "banana" is not a valid duration/,
    );
    expect(failure({ phase: 'Running' }, 5)).toBe(
      'plugin hello replied with an invalid requeue: must be a duration string such as 30s, got number 5',
    );
    expect(failure({ phase: 'Pending' }, '-5s')).toMatch(/must not be negative/);
    expect(failure({ phase: 'Pending' }, { s: 1 })).toMatch(/got an object$/);
  });

  it('outputs over the size limit, or artifacts nested too deeply', () => {
    const big = 'v'.repeat(MAX_OUTPUTS_BYTES);
    expect(failure({ phase: 'Succeeded', outputs: { result: big } })).toMatch(
      /^plugin hello replied with an invalid result: node\.outputs is 131085 bytes as JSON, over the 128 KiB limit of a task result/,
    );
    let deep: unknown = { leaf: 1 };
    for (let i = 0; i < MAX_ARTIFACT_DEPTH; i++) deep = { a: deep };
    expect(failure({ phase: 'Succeeded', outputs: { artifacts: [{ name: 'x', raw: deep }] } })).toBe(
      invalid(`node.outputs.artifacts[0] is nested more than ${MAX_ARTIFACT_DEPTH} levels deep`),
    );
  });
});

describe('messages', () => {
  it('a long message is cut with a visible marker, within the limit', () => {
    const r = check({ phase: 'Failed', message: 'm'.repeat(3 * 1024 * 1024) });
    expect(r.ok).toBe(true);
    const msg = r.result.message!;
    expect(msg.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    expect(msg).toMatch(/^m+… \[message truncated: 3145728 characters in all\]$/);
    expect(bound(msg)).toBe(msg);
  });

  it('the cut never splits a surrogate pair', () => {
    for (const pad of [0, 1]) {
      const msg = bound('x'.repeat(pad) + '😀'.repeat(5000));
      expect(msg.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
      expect(Buffer.from(msg, 'utf8').toString('utf8')).toBe(msg); // no lone surrogate
    }
  });

  it('a Failed or Error reply always says something', () => {
    expect(check({ phase: 'Failed' }).result).toEqual({ phase: 'Failed', message: 'plugin hello reported Failed without a message' });
    expect(check({ phase: 'Error', message: '  ' }).result).toEqual({
      phase: 'Error',
      message: 'plugin hello reported Error without a message',
    });
    expect(check({ phase: 'Failed', message: 'x' }).result).toEqual({ phase: 'Failed', message: 'plugin hello reported Failed: x' });
    expect(check({ phase: 'Failed', message: 'disk is full' }).result).toEqual({ phase: 'Failed', message: 'disk is full' });
    // Other phases keep what they said, or nothing.
    expect(check({ phase: 'Succeeded', message: 'x' }).result).toEqual({ phase: 'Succeeded', message: 'x' });
    expect(check({ phase: 'Running' }).result).toEqual({ phase: 'Running' });
  });
});

describe('boundResult: the last guard for every result', () => {
  it('bounds messages and fills in missing failure messages', () => {
    expect(boundResult({ phase: 'Failed' })).toEqual({ phase: 'Failed', message: 'the task reported Failed without a message' });
    expect(boundResult({ phase: 'Failed', message: '403: ' })).toEqual({ phase: 'Failed', message: 'the task reported Failed: 403: ' });
    expect(boundResult({ phase: 'Succeeded', message: 'y'.repeat(10_000) }).message!.length).toBeLessThanOrEqual(MAX_MESSAGE_LENGTH);
    const ok = { phase: 'Succeeded', message: 'fine', outputs: { result: 'r' } } as const;
    expect(boundResult(ok)).toEqual(ok);
  });

  it('fails a result whose outputs are over the limit (an http body, say)', () => {
    const r = boundResult({ phase: 'Succeeded', outputs: { result: 'b'.repeat(MAX_OUTPUTS_BYTES + 1) } });
    expect(r.phase).toBe('Failed');
    expect(r.message).toMatch(/^the task's outputs are 131086 bytes as JSON, over the 128 KiB limit of a task result$/);
    expect(r.outputs).toBeUndefined();
  });
});
