import { describe, expect, it } from 'vitest';
import { ago } from './format.js';
import { backoff } from './backoff.js';
import { tickAfter, youngest } from './use-now.js';

describe('the clock of relative times', () => {
  it('ticks on the next whole second under a minute, then every 30 s', () => {
    expect(tickAfter(0)).toBe(1000);
    expect(tickAfter(2300)).toBe(700);
    expect(tickAfter(59_999)).toBe(1);
    expect(tickAfter(60_000)).toBe(30_000);
    expect(tickAfter(5 * 3600_000)).toBe(30_000);
  });

  it('follows the youngest time shown', () => {
    expect(youngest(['2026-01-01T00:00:00Z', undefined, '2026-01-01T00:00:09Z'])).toBe(Date.parse('2026-01-01T00:00:09Z'));
    expect(youngest([undefined, 'not a time'])).toBeUndefined();
  });

  it('says "ago" no finer than it ticks', () => {
    const t = '2026-01-01T00:00:00Z';
    const at = (s: number) => Date.parse(t) + s * 1000;
    expect(ago(t, at(12))).toBe('12s ago');
    expect(ago(t, at(192))).toBe('3m ago');
    expect(ago(t, at(3 * 3600 + 5 * 60 + 7))).toBe('3h 5m ago');
  });
});

describe('reconnecting to a server that is down', () => {
  it('waits 1 s, 2 s, 4 s … at most 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(backoff)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });
});
