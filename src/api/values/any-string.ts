/**
 * AnyString: parameter values and defaults accept an int, a float, a boolean or a string and are
 * held as a string (spec document 001). YAML users write `value: 3` or `value: true`; the engine
 * must see `"3"` and `"true"`.
 *
 * Numbers are written the way the peer system writes a float64 it parsed from JSON: the shortest
 * digits that read back to the same number, never in exponent form (`1e21` →
 * `1000000000000000000000`, `0.0000001` → `0.0000001`, `1.50` → `1.5`).
 */
import { FieldError } from '../validation/field-error.js';
import type { FieldRef } from '../validation/field-path.js';
import type { AnyString } from './scalars.js';

/** True for the values AnyString accepts. */
export function isAnyString(value: unknown): value is AnyString {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/** The string an AnyString holds; throws a FieldError for null, lists, objects, NaN. */
export function anyStringToString(value: unknown, field: FieldRef = 'value'): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FieldError(field, `must be a finite number, got ${value}`);
    return formatFloat(value);
  }
  if (typeof value === 'bigint') return value.toString();
  const got = value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : typeof value;
  throw new FieldError(field, `must be a string, number or boolean, got ${got}`);
}

/** Shortest round-trip decimal digits without an exponent, as Go's FormatFloat(v, 'f', -1, 64). */
export function formatFloat(n: number): string {
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, intDigits, frac = '', expText] = m as unknown as [string, string, string, string | undefined, string];
  const digits = intDigits + frac;
  const exp = Number(expText);
  // digits are d.ddd × 10^exp; the decimal point sits after (1 + exp) digits.
  const point = intDigits.length + exp;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
