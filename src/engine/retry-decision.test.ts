import { describe, expect, it } from 'vitest';
import { backoffDelay, decideRetry, type AttemptSummary } from './retry-decision.js';

const failed = (startedAt: number, finishedAt: number, message = 'exit code 1'): AttemptSummary => ({
  phase: 'Failed',
  message,
  startedAt,
  finishedAt,
});
const yes = () => true as const;

describe('retry decision', () => {
  it('retries failures under the default policy until the limit', () => {
    const params = { policy: 'OnFailure' as const, limit: 2 };
    expect(decideRetry(params, [failed(0, 1)], 2, yes)).toEqual({ kind: 'retry' });
    expect(decideRetry(params, [failed(0, 1), failed(2, 3)], 4, yes)).toEqual({ kind: 'retry' });
    const stop = decideRetry(params, [failed(0, 1), failed(2, 3), failed(4, 5)], 6, yes);
    expect(stop).toEqual({ kind: 'stop', message: 'No more retries left (2): exit code 1' });
  });

  it('applies the policy to the phase of the last attempt', () => {
    const err: AttemptSummary = { phase: 'Error', message: 'pod deleted', startedAt: 0, finishedAt: 1 };
    expect(decideRetry({ policy: 'OnFailure' }, [err], 2, yes).kind).toBe('stop');
    expect(decideRetry({ policy: 'OnError' }, [err], 2, yes).kind).toBe('retry');
    expect(decideRetry({ policy: 'OnError' }, [failed(0, 1)], 2, yes).kind).toBe('stop');
    expect(decideRetry({ policy: 'Always' }, [err], 2, yes).kind).toBe('retry');
    expect(decideRetry({ policy: 'OnTransientError' }, [err], 2, yes).kind).toBe('retry');
    expect(decideRetry({ policy: 'OnTransientError' }, [{ ...err, message: 'bad config' }], 2, yes).kind).toBe('stop');
  });

  it('stops when the expression says no, with its reason', () => {
    expect(decideRetry({ policy: 'Always' }, [failed(0, 1)], 2, () => false)).toEqual({
      kind: 'stop',
      message: 'retryStrategy.expression is false: exit code 1',
    });
    expect(decideRetry({ policy: 'Always' }, [failed(0, 1)], 2, () => 'bad expr')).toEqual({ kind: 'stop', message: 'bad expr' });
  });

  it('waits duration * factor^(n-1) after the previous attempt', () => {
    expect(backoffDelay(1000, 2, 1)).toBe(1000);
    expect(backoffDelay(1000, 2, 3)).toBe(4000);
    expect(backoffDelay(1000, undefined, 3)).toBe(1000);
    const params = { policy: 'OnFailure' as const, backoffMs: 1000, factor: 2 };
    const attempts = [failed(0, 10_000), failed(11_000, 20_000)];
    expect(decideRetry(params, attempts, 20_500, yes)).toEqual({ kind: 'wait', at: 22_000, message: 'Backoff for 2s' });
    expect(decideRetry(params, attempts, 22_000, yes)).toEqual({ kind: 'retry' });
  });

  it('never waits longer than cap, however many retries the factor multiplied', () => {
    expect(backoffDelay(1000, 2, 3, 5000)).toBe(4000);
    expect(backoffDelay(1000, 2, 4, 5000)).toBe(5000);
    expect(backoffDelay(1000, 2, 30, 5000)).toBe(5000);
    const params = { policy: 'OnFailure' as const, backoffMs: 1000, factor: 2, capMs: 3000 };
    const attempts = [failed(0, 1), failed(2, 3), failed(4, 5), failed(6, 10_000)];
    expect(decideRetry(params, attempts, 10_001, yes)).toEqual({ kind: 'wait', at: 13_000, message: 'Backoff for 3s' });
  });

  it('fails when maxDuration is past or the backoff would cross it', () => {
    const params = { policy: 'OnFailure' as const, backoffMs: 10_000, maxDurationMs: 15_000 };
    expect(decideRetry(params, [failed(0, 1000)], 2000, yes)).toEqual({ kind: 'wait', at: 11_000, message: 'Backoff for 10s' });
    expect(decideRetry(params, [failed(0, 1000), failed(11_000, 12_000)], 12_500, yes)).toMatchObject({
      kind: 'stop',
      message: expect.stringMatching(/^Backoff would exceed max duration limit/),
    });
    expect(decideRetry({ ...params, backoffMs: undefined }, [failed(0, 1000)], 16_000, yes)).toMatchObject({
      kind: 'stop',
      message: expect.stringMatching(/^Max duration limit exceeded/),
    });
  });
});
