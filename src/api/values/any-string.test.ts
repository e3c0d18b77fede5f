import { describe, expect, it } from 'vitest';
import { anyStringToString, formatFloat, isAnyString } from './any-string.js';

describe('anyStringToString', () => {
  it.each<[unknown, string]>([
    ['hello', 'hello'],
    ['', ''],
    ['3', '3'],
    [3, '3'],
    [-42, '-42'],
    [0, '0'],
    [true, 'true'],
    [false, 'false'],
    [1.5, '1.5'],
    [1.5, '1.5'],
    [0.1, '0.1'],
    [2.0, '2'],
    [123456789012, '123456789012'],
    [1e21, '1000000000000000000000'],
    [1.25e22, '12500000000000000000000'],
    [1e-7, '0.0000001'],
    [-2.5e-8, '-0.000000025'],
    [1.7976931348623157e308, '17976931348623157' + '0'.repeat(292)],
    [-0, '-0'],
  ])('%j → %j', (input, expected) => {
    expect(anyStringToString(input)).toBe(expected);
  });

  it('keeps big integers exact when given as BigInt', () => {
    expect(anyStringToString(9007199254740993n)).toBe('9007199254740993');
  });

  it('reads what JSON gives it the way the peer prints float64', () => {
    const parsed = JSON.parse('{"a": 1.50, "b": 10, "c": 1E3, "d": 0.000001}') as Record<string, number>;
    expect(Object.values(parsed).map((v) => anyStringToString(v))).toEqual(['1.5', '10', '1000', '0.000001']);
  });

  it.each<[unknown, string]>([
    [null, 'got null'],
    [[1], 'got a list'],
    [{ a: 1 }, 'got an object'],
    [undefined, 'got undefined'],
    [Number.NaN, 'finite'],
    [Number.POSITIVE_INFINITY, 'finite'],
  ])('rejects %j naming the field', (input, why) => {
    const run = () => anyStringToString(input, 'spec.arguments.parameters[0].value');
    expect(run).toThrow(/^spec\.arguments\.parameters\[0\]\.value must be/);
    expect(run).toThrow(why);
  });

  it('recognises the accepted inputs', () => {
    expect(['a', 1, 1.5, true].every(isAnyString)).toBe(true);
    expect([null, {}, [], Number.NaN, undefined].some(isAnyString)).toBe(false);
  });

  it('formats every double so that it reads back the same', () => {
    for (const n of [1e-300, 5e-324, 123.456, 1e100, 2 ** 70, 0.1 + 0.2]) {
      const s = formatFloat(n);
      expect(s).not.toMatch(/e/i);
      expect(Number(s)).toBe(n);
    }
  });
});
