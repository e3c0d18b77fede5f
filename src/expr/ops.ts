import type { EvalContext } from './context.js';
import { CHAR_BYTES, charSteps, ELEMENT_BYTES, SHORT_STRING } from './cost.js';
import { compareStrings, isMap, mapHas, typeName, valuesEqual, wrapInt, type Value } from './values.js';

/**
 * Operators on values, with expr-lang's typing rules: arithmetic on numbers (int op int stays
 * int and wraps at 64 bits, anything with a float is float, `/` and `**` are always float, `%`
 * only takes ints), `+` also joins strings, ordering works on numbers and on strings, and
 * anything else is a type error that names both operand types.
 */

function typeError(c: EvalContext, op: string, a: Value, b: Value): never {
  return c.fail('type', `invalid operation: ${typeName(a)} ${op} ${typeName(b)}${hint(op, a, b)}`);
}

function hint(op: string, a: Value, b: Value): string {
  const ta = typeName(a);
  const tb = typeName(b);
  if (ta === 'nil' || tb === 'nil') return ' (an operand is nil: check for nil first or use ??)';
  if ((ta === 'string') !== (tb === 'string') && (ta === 'string' || tb === 'string') && (isNum(a) || isNum(b))) {
    return op === '+' ? ' (convert with string(...) or int(...)/float(...))' : ' (convert the string with int(...) or float(...))';
  }
  return '';
}

const isNum = (v: Value): v is number | bigint => typeof v === 'number' || typeof v === 'bigint';

export function add(c: EvalContext, a: Value, b: Value): Value {
  if (typeof a === 'bigint' && typeof b === 'bigint') return wrapInt(a + b);
  if (typeof a === 'string' && typeof b === 'string') {
    const n = a.length + b.length;
    if (n > c.maxStringLength) return c.limit(`result string would be longer than ${c.maxStringLength} characters`);
    c.charge(charSteps(n));
    c.alloc(n * CHAR_BYTES);
    return a + b;
  }
  if (isNum(a) && isNum(b)) return Number(a) + Number(b);
  return typeError(c, '+', a, b);
}

export function arith(c: EvalContext, op: string, a: Value, b: Value): Value {
  if (!isNum(a) || !isNum(b)) return typeError(c, op, a, b);
  switch (op) {
    case '-':
      return typeof a === 'bigint' && typeof b === 'bigint' ? wrapInt(a - b) : Number(a) - Number(b);
    case '*':
      return typeof a === 'bigint' && typeof b === 'bigint' ? wrapInt(a * b) : Number(a) * Number(b);
    case '/':
      return Number(a) / Number(b);
    case '**':
      return Math.pow(Number(a), Number(b));
    case '%':
      if (typeof a !== 'bigint' || typeof b !== 'bigint') return typeError(c, '%', a, b);
      if (b === 0n) return c.fail('type', 'integer divide by zero');
      return a % b;
    default:
      return typeError(c, op, a, b);
  }
}

export function negate(c: EvalContext, op: string, a: Value): Value {
  if (typeof a === 'bigint') return op === '-' ? wrapInt(-a) : a;
  if (typeof a === 'number') return op === '-' ? -a : a;
  return c.fail('type', `invalid operation: ${op}${typeName(a)}`);
}

/** `<`, `>`, `<=`, `>=` on two numbers or two strings. */
export function compare(c: EvalContext, op: string, a: Value, b: Value): boolean {
  let r: number;
  if (isNum(a) && isNum(b)) {
    // JS compares bigint with number exactly (and only `==` does, across the two types).
    // eslint-disable-next-line eqeqeq
    r = a < b ? -1 : a > b ? 1 : a === b || a == b ? 0 : NaN;
  } else if (typeof a === 'string' && typeof b === 'string') {
    if (a.length > SHORT_STRING && b.length > SHORT_STRING) c.charge(charSteps(Math.min(a.length, b.length)));
    r = compareStrings(a, b);
  } else {
    return typeError(c, op, a, b);
  }
  switch (op) {
    case '<':
      return r < 0;
    case '>':
      return r > 0;
    case '<=':
      return r <= 0;
    default:
      return r >= 0;
  }
}

export function equal(c: EvalContext, a: Value, b: Value): boolean {
  return valuesEqual(a, b, c);
}

/** `needle in haystack`: element of a list (by equality), key of a map; `in nil` is false. */
export function inOp(c: EvalContext, needle: Value, hay: Value): boolean {
  if (hay === null || hay === undefined) return false;
  if (Array.isArray(hay)) {
    c.charge(hay.length);
    for (const item of hay) if (valuesEqual(item, needle, c)) return true;
    return false;
  }
  if (isMap(hay)) {
    if (needle === null || needle === undefined) return false;
    if (typeof needle !== 'string') return c.fail('type', `invalid operation: ${typeName(needle)} in map (map keys are strings)`);
    return mapHas(hay, needle);
  }
  return c.fail('type', `operator "in" is not defined on ${typeName(hay)} (use contains for substrings)`);
}

/**
 * `needle in ["a", "b"]` with a literal list of only strings: expr-lang turns the list into a
 * string set, so a non-string needle is a type error rather than a silent false.
 */
export function inStringSet(c: EvalContext, needle: Value, set: ReadonlySet<string>, listText: string): boolean {
  if (typeof needle === 'string') return set.has(needle);
  if (needle === null || needle === undefined) return false;
  return c.fail('type', `invalid operation: ${typeName(needle)} in ${listText} (the list holds only strings; convert with string(...))`);
}

/** Operands of `contains`, `startsWith`, `endsWith`, `matches`: strings, or nil (then false). */
export function stringOperands(c: EvalContext, op: string, a: Value, b: Value): [string, string] | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (typeof a !== 'string' || typeof b !== 'string') return typeError(c, op, a, b);
  if (a.length > SHORT_STRING) c.charge(charSteps(op === 'contains' ? a.length : b.length));
  return [a, b];
}

export function range(c: EvalContext, a: Value, b: Value): Value {
  if (typeof a !== 'bigint' || typeof b !== 'bigint') return typeError(c, '..', a, b);
  if (b < a) return [];
  const size = b - a + 1n;
  if (size > BigInt(c.limits.maxSteps)) return c.limit(`range ${a}..${b} has more than ${c.limits.maxSteps} elements`);
  const n = Number(size);
  c.charge(2 * n); // each element is a bigint of its own: allocated, not just stored
  c.alloc(n * (ELEMENT_BYTES + 16));
  const out: bigint[] = new Array<bigint>(n);
  for (let i = 0; i < n; i++) out[i] = a + BigInt(i);
  return out;
}
