/**
 * Duration strings. The spec uses two dialects:
 *
 * - Go style (`requeue`, containerSet retry `duration`, memoize `maxAge`): a sequence of decimal
 *   numbers each with a unit among ns, us (µs), ms, s, m, h — `500ms`, `1h30m`, `1.5s`. A bare
 *   `0` is allowed; any other number needs a unit.
 * - Seconds-or-duration (suspend `duration`, backoff `duration`/`maxDuration`): a bare number
 *   means seconds (`30`, `"30"`), otherwise the Go style plus the unit `d` (24h): `2m`, `6h`, `1d`.
 *
 * Results are milliseconds (possibly fractional below 1 ms). Arithmetic runs on BigInt
 * nanoseconds so that `0.1h` or `1.000000001s` are exact and the int64 nanosecond limit of the
 * peer system is enforced the same way.
 */
import { FieldError } from '../validation/field-error.js';
import type { FieldRef } from '../validation/field-path.js';

const NS_PER: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const NS_PER_DAY = 86_400_000_000_000n;
const MAX_NS = (1n << 63n) - 1n;

export interface DurationOptions {
  /** Field named in errors; default `duration`. */
  field?: FieldRef;
  /** Accept a leading `-`. Default false: every duration in plugflow is a wait. */
  allowNegative?: boolean;
}

const GO_HINT = 'use a number with a unit: ns, us, ms, s, m, h (for example 30s, 2m, 1h30m, 500ms)';
const FLEX_HINT = 'use seconds (30) or a number with a unit: ms, s, m, h, d (for example 2m, 6h, 1d, 1h30m)';

/** Parses a Go-style duration (`1h30m`, `500ms`) to milliseconds. */
export function parseGoDuration(text: string, options: DurationOptions = {}): number {
  return nsToMs(parseUnits(text, false, options, GO_HINT));
}

/** Parses a seconds-or-duration value (`30`, `"30"`, `2m`, `1d`) to milliseconds. */
export function parseSecondsOrDuration(value: string | number, options: DurationOptions = {}): number {
  const field = options.field ?? 'duration';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FieldError(field, `must be a finite number of seconds, got ${value}`);
    return parseSecondsOrDuration(String(value), options);
  }
  if (typeof value !== 'string') {
    throw new FieldError(field, `must be a string or a number of seconds, got ${describe(value)}`);
  }
  const bare = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)$/.exec(value);
  if (bare) {
    const ns = decimalTimes(bare[2]!, NS_PER.s!);
    return nsToMs(signed(bare[1] === '-', ns, value, options, FLEX_HINT));
  }
  return nsToMs(parseUnits(value, true, options, FLEX_HINT));
}

function parseUnits(text: string, days: boolean, options: DurationOptions, hint: string): bigint {
  const field = options.field ?? 'duration';
  if (typeof text !== 'string') throw new FieldError(field, `must be a duration string, got ${describe(text)}`);
  const bad = (why: string) => new FieldError(field, `${JSON.stringify(text)} is not a valid duration: ${why}; ${hint}`);
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw bad('it is empty');
  let total = 0n;
  const part = /^(\d*(?:\.\d*)?)([^\d.]+)/;
  while (rest !== '') {
    const m = part.exec(rest);
    if (!m) throw bad(/^[\d.]+$/.test(rest) ? `the number ${rest} has no unit` : `unexpected ${JSON.stringify(rest)}`);
    const [whole, number, unit] = m as unknown as [string, string, string];
    if (number === '' || number === '.') throw bad(`missing number before ${JSON.stringify(unit)}`);
    const per = unit === 'd' && days ? NS_PER_DAY : NS_PER[unit];
    if (per === undefined) throw bad(`unknown unit ${JSON.stringify(unit)}`);
    total += decimalTimes(number, per);
    if (total > MAX_NS) throw bad('it is too long (limit about 292 years)');
    rest = rest.slice(whole.length);
  }
  return signed(negative, total, text, options, hint);
}

function signed(negative: boolean, ns: bigint, text: string, options: DurationOptions, hint: string): bigint {
  const field = options.field ?? 'duration';
  if (ns > MAX_NS) throw new FieldError(field, `${JSON.stringify(text)} is too long (limit about 292 years)`);
  if (negative && ns !== 0n && !options.allowNegative) {
    throw new FieldError(field, `${JSON.stringify(text)} must not be negative; ${hint}`);
  }
  return negative ? -ns : ns;
}

/** `digits[.fraction] × per`, truncating below one nanosecond as Go does. */
function decimalTimes(number: string, per: bigint): bigint {
  const [intPart = '', frac = ''] = number.split('.');
  const whole = BigInt(intPart === '' ? '0' : intPart) * per;
  if (frac === '') return whole;
  const scale = 10n ** BigInt(frac.length);
  return whole + (BigInt(frac) * per) / scale;
}

function nsToMs(ns: bigint): number {
  const ms = ns / 1_000_000n;
  const rem = ns % 1_000_000n;
  return Number(ms) + Number(rem) / 1e6;
}

/**
 * Formats milliseconds as a compact Go-style duration that both parsers accept:
 * `1h30m`, `2m`, `1.5s`, `500ms`, `0s`. Zero components are left out (`1h5s`); days are never
 * used so any Go program can read the result.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`cannot format ${ms} as a duration`);
  let ns = BigInt(Math.round(ms * 1e6));
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  if (ns < 0n) ns = -ns;
  if (ns < NS_PER.s!) {
    if (ns < NS_PER.us!) return `${sign}${ns}ns`;
    if (ns < NS_PER.ms!) return `${sign}${fixed(ns, NS_PER.us!)}us`;
    return `${sign}${fixed(ns, NS_PER.ms!)}ms`;
  }
  const h = ns / NS_PER.h!;
  ns %= NS_PER.h!;
  const m = ns / NS_PER.m!;
  ns %= NS_PER.m!;
  let out = sign;
  if (h > 0n) out += `${h}h`;
  if (m > 0n) out += `${m}m`;
  if (ns > 0n) out += `${fixed(ns, NS_PER.s!)}s`;
  return out;
}

/** `value / unit` as a decimal without trailing zeros. */
function fixed(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const rem = value % unit;
  if (rem === 0n) return whole.toString();
  const width = unit.toString().length - 1;
  return `${whole}.${rem.toString().padStart(width, '0').replace(/0+$/, '')}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
