/**
 * IntOrString fields (`retryStrategy.limit`, `activeDeadlineSeconds`, `backoff.factor`,
 * probe ports, `withSequence.count`...): an integer, or a string that is resolved at run time
 * (`"3"`, `"{{inputs.parameters.limit}}"`). The engine needs the integer once tags are resolved.
 */
import { FieldError } from '../validation/field-error.js';
import type { FieldRef } from '../validation/field-path.js';
import type { IntOrString } from './scalars.js';

/** True for an integer number or any string. */
export function isIntOrString(value: unknown): value is IntOrString {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/**
 * The integer an IntOrString holds once resolved. Strings must be a plain (optionally signed)
 * decimal integer; an unresolved `{{...}}` tag is reported as such.
 */
export function intOrStringToNumber(value: unknown, field: FieldRef = 'value'): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value;
    throw new FieldError(field, `must be an integer, got ${value}`);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (/^[+-]?\d+$/.test(text)) {
      const n = Number(text);
      if (Number.isSafeInteger(n)) return n;
      throw new FieldError(field, `${JSON.stringify(value)} is too large for an integer`);
    }
    if (text.includes('{{'))
      throw new FieldError(field, `${JSON.stringify(value)} still holds an unresolved tag; it must resolve to an integer`);
    throw new FieldError(field, `${JSON.stringify(value)} is not an integer`);
  }
  const got = value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
  throw new FieldError(field, `must be an integer or a string, got ${got}`);
}

/**
 * Like intOrStringToNumber but also accepts decimals (`backoff.factor: 1.5` and `"1.5"`), for the
 * fields whose IntOrString is used as a multiplier.
 */
export function intOrStringToFloat(value: unknown, field: FieldRef = 'value'): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(value.trim())) return Number(value.trim());
  if (typeof value === 'string' && value.includes('{{')) {
    throw new FieldError(field, `${JSON.stringify(value)} still holds an unresolved tag; it must resolve to a number`);
  }
  return intOrStringToNumber(value, field);
}
