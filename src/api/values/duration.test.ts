import { describe, expect, it } from 'vitest';
import { FieldError } from '../validation/field-error.js';
import { formatDuration, parseGoDuration, parseSecondsOrDuration } from './duration.js';

describe('parseGoDuration', () => {
  it.each([
    ['0', 0],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['1h0m5s', 3_605_000],
    ['100us', 0.1],
    ['100µs', 0.1],
    ['100μs', 0.1],
    ['250ns', 0.00025],
    ['0.1h', 360_000],
    ['+5s', 5_000],
    ['1m1m', 120_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each([
    ['', 'empty'],
    ['30', 'has no unit'],
    ['1d', 'unknown unit "d"'],
    ['5x', 'unknown unit "x"'],
    ['s', 'missing number'],
    ['.s', 'missing number'],
    ['1 h', 'unknown unit " h"'],
    ['3000000h', 'too long'],
  ])('rejects %j (%s)', (text, why) => {
    expect(() => parseGoDuration(text, { field: 'requeue' })).toThrow(FieldError);
    expect(() => parseGoDuration(text, { field: 'requeue' })).toThrow(why);
    expect(() => parseGoDuration(text, { field: 'requeue' })).toThrow(/^requeue /);
  });

  it('refuses negative durations unless asked', () => {
    expect(() => parseGoDuration('-1s')).toThrow('must not be negative');
    expect(parseGoDuration('-1m30s', { allowNegative: true })).toBe(-90_000);
    expect(parseGoDuration('-0')).toBe(0);
  });

  it('accepts the int64 nanosecond limit and no more', () => {
    expect(parseGoDuration('2562047h47m16.854775807s')).toBeCloseTo(9_223_372_036_854.775, 0);
    expect(() => parseGoDuration('2562047h47m16.854775808s')).toThrow('too long');
  });
});

describe('parseSecondsOrDuration', () => {
  it.each<[string | number, number]>([
    ['30', 30_000],
    [30, 30_000],
    ['1.5', 1_500],
    [0, 0],
    ['2m', 120_000],
    ['6h', 21_600_000],
    ['1d', 86_400_000],
    ['1d12h', 129_600_000],
    ['90s', 90_000],
    ['500ms', 500],
  ])('%j is %d ms', (value, ms) => {
    expect(parseSecondsOrDuration(value)).toBe(ms);
  });

  it('names the field and shows the allowed forms', () => {
    expect(() => parseSecondsOrDuration('soon', { field: 'spec.templates[0].suspend.duration' })).toThrow(
      /^spec\.templates\[0\]\.suspend\.duration "soon" is not a valid duration: .*1d/,
    );
    expect(() => parseSecondsOrDuration('-5')).toThrow('must not be negative');
    expect(() => parseSecondsOrDuration(Number.NaN)).toThrow('finite');
    expect(() => parseSecondsOrDuration({} as unknown as string)).toThrow('got an object');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [1_500, '1.5s'],
    [120_000, '2m'],
    [5_400_000, '1h30m'],
    [3_605_000, '1h5s'],
    [90_061_000, '25h1m1s'],
    [0.5, '500us'],
    [0.0015, '1.5us'],
    [0.000001, '1ns'],
    [-90_000, '-1m30s'],
    [1_250.5, '1.2505s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through both parsers', () => {
    for (const ms of [1, 999, 1_000, 61_000, 3_600_000, 86_400_000, 123_456_789, 0.25]) {
      expect(parseGoDuration(formatDuration(ms))).toBe(ms);
      expect(parseSecondsOrDuration(formatDuration(ms))).toBe(ms);
    }
  });

  it('refuses non-finite values', () => {
    expect(() => formatDuration(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
