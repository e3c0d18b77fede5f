/**
 * The value model. Expressions see JSON-like data: nil (`null`/`undefined`), booleans, strings,
 * lists (arrays), maps (plain objects) and two kinds of numbers, as in expr-lang: `int` is a
 * 64-bit integer (a JS bigint, so `1 + 2` stays exact and wraps like Go) and `float` is a JS
 * number. Numbers from JSON payloads are floats (Go decodes JSON numbers as float64); integer
 * literals, `len`, `int(...)` and ranges are ints. Comparisons mix them freely.
 *
 * Only own properties of plain objects are visible: `__proto__`, `constructor` and everything
 * inherited are simply missing keys. Maps this module creates have no prototype, so a key named
 * `__proto__` is stored as data and can never reach Object.prototype.
 */

export type Value = null | undefined | boolean | bigint | number | string | readonly Value[] | ValueMap;
export interface ValueMap {
  readonly [key: string]: Value;
}

export type TypeName = 'nil' | 'bool' | 'int' | 'float' | 'string' | 'array' | 'map' | 'unknown';

const hasOwn = Object.hasOwn;
const getProto = Object.getPrototypeOf;

export function isMap(v: unknown): v is ValueMap {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = getProto(v);
  return proto === Object.prototype || proto === null;
}

export function typeName(v: unknown): TypeName {
  if (v === null || v === undefined) return 'nil';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
    default:
      if (Array.isArray(v)) return 'array';
      return isMap(v) ? 'map' : 'unknown';
  }
}

/** A map with no prototype, so any key — `__proto__` included — is plain data. */
export function newMap(): Record<string, Value> {
  return Object.create(null) as Record<string, Value>;
}

/** Own-property read: the only way expressions read maps. */
export function mapGet(m: ValueMap, key: string): Value {
  return hasOwn(m, key) ? (m[key] ?? null) : null;
}

export function mapHas(m: ValueMap, key: string): boolean {
  return hasOwn(m, key);
}

/** Wraps to a signed 64-bit integer, like Go's int arithmetic. */
export function wrapInt(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

/** Charges work against an evaluation budget; supplied by the evaluator. */
export interface Meter {
  charge(steps: number): void;
  /** Charges the estimated bytes of a value being built against the memory budget. */
  alloc(bytes: number): void;
  /** Fails with a limit error (value too deep, string too long, ...). */
  limit(reason: string): never;
  readonly maxValueDepth: number;
  readonly maxStringLength: number;
}

/**
 * Equality as in expr-lang: numbers compare by value across int and float, lists element-wise,
 * maps key by key, nil equals nil, values of different types are simply not equal.
 */
export function valuesEqual(a: Value, b: Value, meter: Meter, depth = 0): boolean {
  if (typeof a === 'string') {
    // Two long strings of one length are compared character by character: charged (16 per step).
    if (typeof b === 'string' && a.length === b.length && a.length > 64) meter.charge(a.length >>> 4);
    return a === b;
  }
  if (a === b) return true;
  if (a === null || a === undefined) return b === null || b === undefined;
  if (b === null || b === undefined) return false;
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'bigint' && tb === 'number') return Number(a) === b;
  if (ta === 'number' && tb === 'bigint') return a === Number(b);
  if (ta !== 'object' || tb !== 'object') return false;
  if (depth >= meter.maxValueDepth) meter.limit(`values are nested more than ${meter.maxValueDepth} levels deep`);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    meter.charge(a.length);
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i], meter, depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b) || !isMap(a) || !isMap(b)) return false;
  const ka = Object.keys(a);
  meter.charge(ka.length * 8); // two maps' keys listed (see KEY_STEPS in cost.ts)
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!hasOwn(b, k) || !valuesEqual(a[k], b[k], meter, depth + 1)) return false;
  }
  return true;
}

/** Orders strings by code point (as Go orders UTF-8 bytes), not by UTF-16 unit. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800–DFFF) encode code points above U+FFFF: move them after U+E000–FFFF.
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Orders two strings like compareStrings, charging for the characters a long comparison reads. */
export function compareCharged(meter: Meter, a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  if (n > 64) meter.charge(n >>> 4);
  return compareStrings(a, b);
}

/** Steps to sort n items: n·log2(n) comparisons. */
export function sortSteps(n: number): number {
  return n * Math.max(1, Math.ceil(Math.log2(n + 1)));
}

/** Keys of a map in Go's order (by code point), charged for listing and sorting them. */
export function sortedKeys(meter: Meter, m: ValueMap): string[] {
  const keys = Object.keys(m);
  meter.charge(keys.length * 4 + sortSteps(keys.length)); // listing (KEY_STEPS in cost.ts) and sorting
  return keys.sort((a, b) => compareCharged(meter, a, b));
}

/** Length of a string in UTF-8 bytes: Go's (and so expr-lang's) `len` of a string. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
