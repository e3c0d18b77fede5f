import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const policy = { initialMs: 100, maxMs: 1000 };
  it('doubles from the initial delay up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((n) => backoffDelay(policy, n))).toEqual([0, 100, 200, 400, 800, 1000, 1000]);
  });
  it('adds at most the jitter fraction', () => {
    expect(backoffDelay({ ...policy, jitter: 0.2 }, 2, () => 0.5)).toBe(220);
    expect(backoffDelay({ ...policy, jitter: 0.2 }, 9, () => 1)).toBe(1200);
  });
});
