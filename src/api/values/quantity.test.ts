import { describe, expect, it } from 'vitest';
import { FieldError } from '../validation/field-error.js';
import { canonicalQuantity, compareQuantities, parseQuantity, quantityToNumber } from './quantity.js';

describe('canonicalQuantity', () => {
  it.each([
    // decimal suffixes: the largest suffix that keeps the number whole
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1.5', '1500m'],
    ['0.1', '100m'],
    ['.5', '500m'],
    ['5.', '5'],
    ['100m', '100m'],
    ['1000', '1k'],
    ['1024', '1024'],
    ['1500000', '1500k'],
    ['2000000', '2M'],
    ['1.5k', '1500'],
    ['0.5M', '500k'],
    ['1G', '1G'],
    ['1000M', '1G'],
    ['1T', '1T'],
    ['1P', '1P'],
    ['1E', '1E'],
    ['9E', '9E'],
    ['+5', '5'],
    ['-5', '-5'],
    ['-1.5', '-1500m'],
    ['0', '0'],
    ['-0', '0'],
    ['0Gi', '0'],
    ['0.000', '0'],
    ['007', '7'],
    // exponent form
    ['1e3', '1k'],
    ['12e6', '12M'],
    ['1E3', '1k'],
    ['1e-3', '1m'],
    ['1.5e3', '1500'],
    ['1e0', '1'],
    ['1e+3', '1k'],
    ['10e2', '1k'],
    ['0e99', '0'],
    // binary suffixes: whole multiples of 1024 stay binary, the rest goes decimal
    ['1Ki', '1Ki'],
    ['1024Ki', '1Mi'],
    ['1.5Gi', '1536Mi'],
    ['2048Ki', '2Mi'],
    ['1536Ki', '1536Ki'],
    ['0.5Ki', '512'],
    ['0.5Mi', '512Ki'],
    ['1.5Ki', '1536'],
    ['1.1Ki', '1126400m'],
    ['1Ei', '1Ei'],
    ['7Ei', '7Ei'],
    ['-1Gi', '-1Gi'],
    ['1.0009765625Ki', '1025'],
    // more than three decimal places: rounded up (away from zero)
    ['0.0001', '1m'],
    ['1.0001', '1001m'],
    ['0.1234', '124m'],
    ['-0.0001', '-1m'],
    ['1e-9', '1m'],
    ['1e-100', '1m'],
    ['0.0009Ki', '922m'],
    // limits
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775807', '-9223372036854775807'],
    ['9223372036854775.807k', '9223372036854775807'],
  ])('%s → %s', (input, canonical) => {
    expect(canonicalQuantity(input)).toBe(canonical);
  });

  it('is idempotent', () => {
    for (const input of ['1000m', '1.5Gi', '0.1', '1e3', '12e6', '1.1Ki', '-0.0001', '7Ei']) {
      const once = canonicalQuantity(input);
      expect(canonicalQuantity(once)).toBe(once);
    }
  });

  it('accepts YAML numbers', () => {
    expect(canonicalQuantity(2)).toBe('2');
    expect(canonicalQuantity(0.5)).toBe('500m');
    expect(canonicalQuantity(1e21 / 1e3)).toBe('1E');
  });
});

describe('parseQuantity', () => {
  it.each(['', ' 1', '1 ', '1.2.3', 'abc', '1Ki2', '1ki', '1KI', '1e', '1e1.5', '1n', '1u', 'Mi', '--1', '1mi', '0x10', '1_000'])(
    'rejects %j naming the field',
    (input) => {
      const run = () => parseQuantity(input, 'spec.templates[0].container.resources.limits.memory');
      expect(run).toThrow(FieldError);
      expect(run).toThrow(/^spec\.templates\[0\]\.container\.resources\.limits\.memory ".*" is not a valid quantity/);
    },
  );

  it.each(['9223372036854775808', '-9223372036854775808', '8Ei', '9223372036854775807.001', '10E', '1e19', '1e100', '1e999999999'])(
    'rejects %s as too large',
    (input) => {
      expect(() => parseQuantity(input, 'q')).toThrow(/^q ".*" is too large/);
    },
  );

  it('rejects non-strings and non-finite numbers', () => {
    expect(() => parseQuantity(Number.NaN)).toThrow('finite');
    expect(() => parseQuantity(null as unknown as string)).toThrow('got null');
  });

  it('keeps the value exact in thousandths', () => {
    expect(parseQuantity('1.5Gi')).toEqual({ milli: 1_610_612_736_000n, format: 'BinarySI' });
    expect(parseQuantity('250m')).toEqual({ milli: 250n, format: 'DecimalSI' });
    expect(parseQuantity('1e3')).toEqual({ milli: 1_000_000n, format: 'DecimalSI' });
    expect(quantityToNumber(parseQuantity('1.5Gi'))).toBe(1_610_612_736);
  });

  it('compares across suffixes', () => {
    expect(compareQuantities(parseQuantity('1Gi'), parseQuantity('1G'))).toBe(1);
    expect(compareQuantities(parseQuantity('1000m'), parseQuantity('1'))).toBe(0);
    expect(compareQuantities(parseQuantity('-1'), parseQuantity('0'))).toBe(-1);
  });
});
