import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LOOP_ITEMS, expandSequence, formatNumber } from './sequence.js';

describe('withSequence', () => {
  it('counts from start', () => {
    expect(expandSequence({ count: 3 })).toEqual(['0', '1', '2']);
    expect(expandSequence({ count: '2', start: '5' })).toEqual(['5', '6']);
    expect(expandSequence({ count: 0 })).toEqual([]);
  });

  it('runs from start to end inclusive, also downwards', () => {
    expect(expandSequence({ start: 2, end: 4 })).toEqual(['2', '3', '4']);
    expect(expandSequence({ start: 3, end: 1 })).toEqual(['3', '2', '1']);
  });

  it('formats with printf verbs', () => {
    expect(expandSequence({ start: 8, end: 10, format: 'n%02d' })).toEqual(['n08', 'n09', 'n10']);
    expect(formatNumber('%x', 255)).toBe('ff');
    expect(formatNumber('%X', 255)).toBe('FF');
    expect(formatNumber('%o', 8)).toBe('10');
    expect(formatNumber('%-3d|', 7)).toBe('7  |');
    expect(formatNumber('%3d', 7)).toBe('  7');
    expect(formatNumber('%03d', -7)).toBe('-07');
    expect(formatNumber('100%% %d', 1)).toBe('100% 1');
  });

  it("expands 100,000 items by default: the guard is the controller's, not a fixed 10,000", () => {
    expect(expandSequence({ count: 100_000 })).toHaveLength(100_000);
    expect(expandSequence({ count: 5 }, 5)).toEqual(['0', '1', '2', '3', '4']);
  });

  it('rejects bad input with the field named', () => {
    expect(() => expandSequence({ count: 2, end: 3 })).toThrow(/only one of count or end/);
    expect(() => expandSequence({})).toThrow(/one of count or end is required/);
    expect(() => expandSequence({ count: 'abc' })).toThrow(/count: "abc" is not an integer/);
    expect(() => expandSequence({ count: -1 })).toThrow(/must not be negative/);
    expect(() => expandSequence({ count: DEFAULT_MAX_LOOP_ITEMS + 1 })).toThrow(
      /100001 items, more than the limit of 100000 \(the controller's --max-loop-items\)/,
    );
    expect(() => expandSequence({ start: 1, end: 11 }, 10)).toThrow(/11 items, more than the limit of 10/);
    expect(() => formatNumber('%d-%d', 1)).toThrow(/exactly one/);
    expect(() => formatNumber('%q', 1)).toThrow(/exactly one/);
    expect(() => formatNumber('plain', 1)).toThrow(/exactly one/);
  });
});
