/**
 * Resource quantities (`500m`, `1.5Gi`, `1e3`) as the spec defines them (document 002):
 * a signed decimal number with an optional binary suffix (Ki Mi Gi Ti Pi Ei), decimal suffix
 * (m, none, k, M, G, T, P, E) or exponent (`e`/`E` plus an integer). Values are kept to three
 * decimal places, finer values rounded up (away from zero), and magnitudes above 2^63-1 are
 * refused.
 *
 * The value is held exactly as a BigInt count of thousandths, so canonical output never loses
 * precision. Canonical form: no fractional digits, the largest suffix that keeps the number
 * whole, sign only when negative. A binary-suffixed input stays binary when the value is a whole
 * multiple of 1024 (`1.5Gi` → `1536Mi`); otherwise, and for every decimal or exponent input,
 * the decimal suffixes are used (`1e3` → `1k`, `0.1` → `100m`).
 */
import { FieldError } from '../validation/field-error.js';
import type { FieldRef } from '../validation/field-path.js';

export type QuantityFormat = 'BinarySI' | 'DecimalSI';

export interface ParsedQuantity {
  /** The value in thousandths of the base unit (`1500m` → 1500n, `1Ki` → 1024000n). */
  readonly milli: bigint;
  /** The suffix family of the input, kept for canonical output. */
  readonly format: QuantityFormat;
}

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_BY_EXP = new Map(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const MAX = (1n << 63n) - 1n;
const MAX_MILLI = MAX * 1000n;
/** Beyond these exponents the value is certainly out of range or below one thousandth. */
const MAX_EXPONENT = 40;

const GRAMMAR = /^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;
const HINT =
  'expected a number with an optional suffix (Ki, Mi, Gi, Ti, Pi, Ei, m, k, M, G, T, P, E) or exponent, for example 500m, 1.5Gi, 2, 1e3';

/** Parses a quantity; throws a FieldError naming `field` when it is malformed or too large. */
export function parseQuantity(input: string | number, field: FieldRef = 'quantity'): ParsedQuantity {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new FieldError(field, `must be a finite quantity, got ${input}`);
    text = numberText(input);
  } else if (typeof input === 'string') {
    text = input;
  } else {
    throw new FieldError(field, `must be a quantity string such as 500m or 1Gi, got ${input === null ? 'null' : typeof input}`);
  }
  const m = GRAMMAR.exec(text);
  if (!m) throw new FieldError(field, `${JSON.stringify(text)} is not a valid quantity: ${HINT}`);
  const [, sign, number, suffix, exponent] = m as unknown as [string, string, string, string | undefined, string | undefined];
  const [intPart, fracPart = ''] = number.split('.');
  const mantissa = BigInt((intPart ?? '') + fracPart || '0');
  // value = mantissa × mult × 10^(exp − fracDigits); we want it × 1000, rounded up.
  let exp10 = 3 - fracPart.length;
  let mult = 1n;
  let format: QuantityFormat = 'DecimalSI';
  if (suffix !== undefined && suffix in BINARY) {
    mult = BINARY[suffix]!;
    format = 'BinarySI';
  } else if (suffix !== undefined) {
    exp10 += DECIMAL[suffix]!;
  } else if (exponent !== undefined) {
    const e = Number(exponent);
    if (mantissa !== 0n && e > MAX_EXPONENT) throw tooLarge(field, text);
    exp10 += Math.max(Math.min(e, MAX_EXPONENT), -MAX_EXPONENT * 2);
  }
  let magnitude: bigint;
  if (exp10 >= 0) {
    magnitude = mantissa * mult * 10n ** BigInt(exp10);
  } else {
    const divisor = 10n ** BigInt(-exp10);
    const scaled = mantissa * mult;
    magnitude = scaled / divisor + (scaled % divisor === 0n ? 0n : 1n);
  }
  if (magnitude > MAX_MILLI) throw tooLarge(field, text);
  return { milli: sign === '-' ? -magnitude : magnitude, format };
}

/** The canonical text of a parsed quantity. */
export function formatQuantity(q: ParsedQuantity): string {
  if (q.milli === 0n) return '0';
  const sign = q.milli < 0n ? '-' : '';
  const abs = q.milli < 0n ? -q.milli : q.milli;
  if (q.format === 'BinarySI' && abs % 1000n === 0n && abs / 1000n >= 1024n) {
    const units = abs / 1000n;
    let best = '';
    let bestValue = units;
    for (const [suffix, mult] of Object.entries(BINARY)) {
      if (units % mult === 0n) {
        best = suffix;
        bestValue = units / mult;
      }
    }
    return `${sign}${bestValue}${best}`;
  }
  // Decimal: the largest exponent (a multiple of 3, from -3 to 18) that keeps the number whole.
  let exp = -3;
  let value = abs;
  while (exp < 18 && value % 1000n === 0n) {
    value /= 1000n;
    exp += 3;
  }
  return `${sign}${value}${DECIMAL_BY_EXP.get(exp)}`;
}

/** Parses and re-emits in canonical form: `1000m` → `1`, `1.5Gi` → `1536Mi`, `0.1` → `100m`. */
export function canonicalQuantity(input: string | number, field: FieldRef = 'quantity'): string {
  return formatQuantity(parseQuantity(input, field));
}

/** The value as a JavaScript number of base units (may lose precision above 2^53). */
export function quantityToNumber(q: ParsedQuantity): number {
  return Number(q.milli) / 1000;
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantities(a: ParsedQuantity, b: ParsedQuantity): -1 | 0 | 1 {
  return a.milli < b.milli ? -1 : a.milli > b.milli ? 1 : 0;
}

function tooLarge(field: FieldRef, text: string): FieldError {
  return new FieldError(field, `${JSON.stringify(text)} is too large: quantities are limited to 2^63-1 (9223372036854775807) in magnitude`);
}

/** A JSON/YAML number as quantity text, without JavaScript's `1e+21` style. */
function numberText(n: number): string {
  const s = String(n);
  return s.replace(/e\+?/, 'e');
}
