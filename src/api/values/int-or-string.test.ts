import { describe, expect, it } from 'vitest';
import { intOrStringToFloat, intOrStringToNumber, isIntOrString } from './int-or-string.js';

describe('intOrStringToNumber', () => {
  it.each<[unknown, number]>([
    [3, 3],
    ['3', 3],
    [' 3 ', 3],
    ['-2', -2],
    ['+7', 7],
    [0, 0],
    ['0010', 10],
  ])('%j → %d', (input, expected) => {
    expect(intOrStringToNumber(input)).toBe(expected);
  });

  it.each<[unknown, string]>([
    [1.5, 'must be an integer, got 1.5'],
    ['1.5', '"1.5" is not an integer'],
    ['three', '"three" is not an integer'],
    ['', '"" is not an integer'],
    ['{{inputs.parameters.limit}}', 'unresolved tag'],
    ['99999999999999999999', 'too large'],
    [null, 'got null'],
    [true, 'got boolean'],
    [[1], 'got a list'],
  ])('rejects %j naming the field', (input, why) => {
    const run = () => intOrStringToNumber(input, 'spec.templates[1].retryStrategy.limit');
    expect(run).toThrow(/^spec\.templates\[1\]\.retryStrategy\.limit /);
    expect(run).toThrow(why);
  });

  it('tells int-or-string values apart', () => {
    expect([1, '1', 'x', -3].every(isIntOrString)).toBe(true);
    expect([1.5, null, true, {}].some(isIntOrString)).toBe(false);
  });
});

describe('intOrStringToFloat', () => {
  it('accepts decimals for multipliers such as backoff.factor', () => {
    expect(intOrStringToFloat(2)).toBe(2);
    expect(intOrStringToFloat(1.5)).toBe(1.5);
    expect(intOrStringToFloat('1.5')).toBe(1.5);
    expect(intOrStringToFloat('3')).toBe(3);
    expect(() => intOrStringToFloat('{{x}}', 'factor')).toThrow(/^factor .*unresolved tag/);
    expect(() => intOrStringToFloat('fast', 'factor')).toThrow('"fast" is not an integer');
  });
});
