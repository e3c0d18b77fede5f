import {
  argError,
  compareCharged,
  floatToInt,
  int,
  keyString,
  list,
  map,
  parseGoFloat,
  parseGoInt,
  str,
  type BuiltinDef,
} from './builtins-support.js';
import type { EvalContext } from './context.js';
import { CHAR_BYTES, chargeKey, charSteps, ELEMENT_BYTES, KEY_BYTES, KEY_STEPS, MAP_BYTES } from './cost.js';
import { describeValue, formatGo, toJson } from './format.js';
import { jsonPath } from './jsonpath.js';
import { STRING_BUILTINS } from './builtins-string.js';
import { isMap, newMap, sortedKeys, sortSteps, typeName, utf8Length, valuesEqual, wrapInt, type Value } from './values.js';
import { errorMessage } from '../log/error-message.js';

export { sortedKeys };

/**
 * The non-predicate builtins of expr-lang (dates left out: they need Go's time package and are
 * not used by workflows) plus the peer's additions `asInt`, `asFloat`, `toJson`, `fromJson`
 * and `jsonpath`. Strings are measured and indexed in UTF-8 bytes where expr-lang does so
 * (`len`, `indexOf`), because it works on Go strings.
 */

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function toInt(c: EvalContext, fn: string, v: Value): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return floatToInt(v);
  if (typeof v === 'string') {
    const parsed = parseGoInt(v);
    if (parsed === null) return c.fail('call', `invalid operation: ${fn}(${describeValue(v)}): not an integer`);
    return parsed;
  }
  return c.fail('type', `invalid operation: ${fn}(${typeName(v)})`);
}

function toFloat(c: EvalContext, fn: string, v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') {
    const parsed = parseGoFloat(v);
    if (parsed === null) return c.fail('call', `invalid operation: ${fn}(${describeValue(v)}): not a number`);
    return parsed;
  }
  return c.fail('type', `invalid operation: ${fn}(${typeName(v)})`);
}

/** Parses JSON into expression values: numbers become floats, objects prototype-free maps. */
export function fromJsonText(c: EvalContext, fn: string, text: string): Value {
  // JSON.parse builds its own tree before adoptJson copies it: about one step per 4 characters.
  c.charge(text.length >> 2);
  c.alloc(text.length * CHAR_BYTES * 2);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return c.fail('call', `${fn}: invalid JSON: ${errorMessage(err)}`);
  }
  return adoptJson(c, parsed, 0);
}

function adoptJson(c: EvalContext, v: unknown, depth: number): Value {
  if (v === null || typeof v !== 'object') return v as Value;
  if (depth >= c.maxValueDepth) return c.limit(`JSON value is nested more than ${c.maxValueDepth} levels deep`);
  if (Array.isArray(v)) {
    c.charge(v.length);
    c.alloc(v.length * ELEMENT_BYTES);
    return v.map((x) => adoptJson(c, x, depth + 1));
  }
  const out = newMap();
  const keys = Object.keys(v);
  c.charge(keys.length * KEY_STEPS + 4); // a map without prototype is a hash table of its own
  c.alloc(MAP_BYTES + keys.length * KEY_BYTES);
  for (const k of keys) out[k] = adoptJson(c, (v as Record<string, unknown>)[k], depth + 1);
  return out;
}

function numeric(c: EvalContext, fn: string, v: Value): number | bigint {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  return c.fail('type', `invalid argument for ${fn} (type ${typeName(v)})`);
}

/** Numbers of the arguments, flattening lists (as max/min/mean/median do). */
function numbers(c: EvalContext, fn: string, args: Value[], depth = 0): (number | bigint)[] {
  const out: (number | bigint)[] = [];
  for (const a of args) {
    if (Array.isArray(a)) {
      if (depth >= c.maxValueDepth) c.limit(`value is nested more than ${c.maxValueDepth} levels deep`);
      c.charge(a.length);
      for (const x of numbers(c, fn, a as Value[], depth + 1)) out.push(x);
    } else out.push(numeric(c, fn, a));
  }
  return out;
}

function sortValues(c: EvalContext, fn: string, items: Value[], desc: boolean): Value[] {
  const allNum = items.every((v) => typeof v === 'number' || typeof v === 'bigint');
  const allStr = items.every((v) => typeof v === 'string');
  if (!allNum && !allStr) return c.fail('type', `${fn}: can only sort numbers or strings (all of one kind)`);
  c.charge(sortSteps(items.length));
  const cmp = allStr
    ? (a: Value, b: Value) => compareCharged(c, a as string, b as string)
    : (a: Value, b: Value) => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);
  return [...items].sort(desc ? (a, b) => cmp(b, a) : cmp);
}

function order(c: EvalContext, fn: string, v: Value): boolean {
  if (v === undefined) return false;
  if (v === 'asc') return false;
  if (v === 'desc') return true;
  return c.fail('call', `${fn}: invalid order (${describeValue(v)}), expected "asc" or "desc"`);
}

function flatten(c: EvalContext, items: readonly Value[], out: Value[], depth: number): void {
  if (depth >= c.maxValueDepth) c.limit(`value is nested more than ${c.maxValueDepth} levels deep`);
  c.charge(items.length);
  for (const v of items) {
    if (Array.isArray(v)) flatten(c, v as Value[], out, depth + 1);
    else out.push(v);
  }
}

function bitFn(op: (a: bigint, b: bigint) => bigint, shift = false): BuiltinDef {
  return {
    min: 2,
    max: 2,
    cost: 'pick',
    fn: (c, [a, b]) => {
      if (typeof a !== 'bigint' || typeof b !== 'bigint')
        return c.fail('type', `bit operations take two ints, got ${typeName(a)} and ${typeName(b)}`);
      if (shift && b < 0n) return c.fail('call', `invalid operation: negative shift count ${b}`);
      if (shift && b > 64n) return 0n;
      return wrapInt(op(a, b));
    },
  };
}

export const BUILTINS: Record<string, BuiltinDef> = {
  ...STRING_BUILTINS,
  len: {
    min: 1,
    max: 1,
    cost: 'pick', // constant for lists; strings and maps are charged here
    fn: (c, [v]) => {
      if (typeof v === 'string') {
        c.charge(charSteps(v.length));
        return BigInt(utf8Length(v));
      }
      if (Array.isArray(v)) return BigInt(v.length);
      if (isMap(v)) {
        const n = Object.keys(v).length;
        c.charge(n * KEY_STEPS);
        return BigInt(n);
      }
      return c.fail('type', `invalid argument for len (type ${typeName(v)})`);
    },
  },
  type: { min: 1, max: 1, cost: 'pick', fn: (_c, [v]) => typeName(v) },
  abs: {
    min: 1,
    max: 1,
    cost: 'pick',
    fn: (c, [v]) => {
      const n = numeric(c, 'abs', v);
      return typeof n === 'bigint' ? (n < 0n ? wrapInt(-n) : n) : Math.abs(n);
    },
  },
  ceil: { min: 1, max: 1, cost: 'pick', fn: (c, [v]) => Math.ceil(Number(numeric(c, 'ceil', v))) },
  floor: { min: 1, max: 1, cost: 'pick', fn: (c, [v]) => Math.floor(Number(numeric(c, 'floor', v))) },
  round: {
    min: 1,
    max: 1,
    cost: 'pick',
    fn: (c, [v]) => {
      const x = Number(numeric(c, 'round', v));
      return x < 0 ? -Math.round(-x) : Math.round(x); // half away from zero, as Go's math.Round
    },
  },
  int: { min: 1, max: 1, cost: 'scan', fn: (c, [v]) => toInt(c, 'int', v) },
  float: { min: 1, max: 1, cost: 'scan', fn: (c, [v]) => toFloat(c, 'float', v) },
  asInt: { min: 1, max: 1, cost: 'scan', fn: (c, [v]) => toInt(c, 'asInt', v) },
  asFloat: { min: 1, max: 1, cost: 'scan', fn: (c, [v]) => toFloat(c, 'asFloat', v) },
  string: { min: 1, max: 1, cost: 'build', fn: (c, [v]) => formatGo(v, c) },
  max: {
    min: 1,
    max: Infinity,
    cost: 'scan',
    fn: (c, args) => numbers(c, 'max', args).reduce<number | bigint | null>((m, x) => (m === null || x > m ? x : m), null),
  },
  min: {
    min: 1,
    max: Infinity,
    cost: 'scan',
    fn: (c, args) => numbers(c, 'min', args).reduce<number | bigint | null>((m, x) => (m === null || x < m ? x : m), null),
  },
  mean: {
    min: 1,
    max: Infinity,
    cost: 'scan',
    fn: (c, args) => {
      const xs = numbers(c, 'mean', args);
      return xs.length === 0 ? 0 : xs.reduce<number>((s, x) => s + Number(x), 0) / xs.length;
    },
  },
  median: {
    min: 1,
    max: Infinity,
    cost: 'scan',
    fn: (c, args) => {
      const xs = numbers(c, 'median', args)
        .map(Number)
        .sort((a, b) => a - b);
      c.charge(sortSteps(xs.length));
      if (xs.length === 0) return 0;
      const mid = xs.length >> 1;
      return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
    },
  },
  toJSON: { min: 1, max: 1, cost: 'build', fn: (c, [v]) => toJson(v, c, '  ') },
  toJson: { min: 1, max: 1, cost: 'build', fn: (c, [v]) => toJson(v, c) },
  fromJSON: { min: 1, max: 1, cost: 'build', fn: (c, args) => fromJsonText(c, 'fromJSON', str(c, 'fromJSON', args, 0)) },
  fromJson: { min: 1, max: 1, cost: 'build', fn: (c, args) => fromJsonText(c, 'fromJson', str(c, 'fromJson', args, 0)) },
  toBase64: { min: 1, max: 1, cost: 'build', fn: (c, args) => c.checkString(utf8(str(c, 'toBase64', args, 0)).toString('base64')) },
  fromBase64: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'fromBase64', args, 0);
      if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s))
        return c.fail('call', 'fromBase64: illegal base64 data');
      return Buffer.from(s, 'base64').toString('utf8');
    },
  },
  first: { min: 1, max: 1, cost: 'pick', fn: (c, args) => list(c, 'first', args, 0)[0] ?? null },
  last: {
    min: 1,
    max: 1,
    cost: 'pick',
    fn: (c, args) => {
      const xs = list(c, 'last', args, 0);
      return xs.length ? xs[xs.length - 1] : null;
    },
  },
  get: {
    min: 2,
    max: 2,
    cost: 'pick',
    fn: (_c, [from, key]) => {
      if (Array.isArray(from) && (typeof key === 'bigint' || typeof key === 'number')) {
        let i = Number(key);
        if (i < 0) i += from.length;
        return i >= 0 && i < from.length ? (from[Math.trunc(i)] ?? null) : null;
      }
      if (isMap(from) && typeof key === 'string') return Object.hasOwn(from, key) ? (from[key] ?? null) : null;
      return null;
    },
  },
  take: {
    min: 2,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const xs = list(c, 'take', args, 0);
      const n = int(c, 'take', args, 1);
      if (n < 0) return c.fail('call', `take: cannot take ${n} elements`);
      return xs.slice(0, n);
    },
  },
  keys: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      return sortedKeys(c, map(c, 'keys', args, 0));
    },
  },
  values: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const m = map(c, 'values', args, 0);
      return sortedKeys(c, m).map((k) => m[k] ?? null);
    },
  },
  toPairs: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const m = map(c, 'toPairs', args, 0);
      c.alloc(Object.keys(m).length * 3 * ELEMENT_BYTES);
      return sortedKeys(c, m).map((k) => [k, m[k] ?? null]);
    },
  },
  fromPairs: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const pairs = list(c, 'fromPairs', args, 0);
      c.charge(pairs.length);
      const out = newMap();
      for (const p of pairs) {
        if (!Array.isArray(p) || p.length !== 2) return c.fail('call', 'fromPairs: every element must be a [key, value] pair');
        out[chargeKey(c, keyString(c, 'fromPairs', p[0]))] = p[1];
      }
      return out;
    },
  },
  reverse: { min: 1, max: 1, cost: 'build', fn: (c, args) => [...list(c, 'reverse', args, 0)].reverse() },
  uniq: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const out: Value[] = [];
      for (const v of list(c, 'uniq', args, 0)) {
        c.charge(out.length + 1);
        if (!out.some((o) => valuesEqual(o, v, c))) out.push(v);
      }
      return out;
    },
  },
  concat: {
    min: 1,
    max: Infinity,
    cost: 'build',
    fn: (c, args) => {
      const out: Value[] = [];
      args.forEach((_a, i) => {
        const xs = list(c, 'concat', args, i);
        for (let j = 0; j < xs.length; j++) out.push(xs[j]);
      });
      return out;
    },
  },
  flatten: {
    min: 1,
    max: 1,
    cost: 'build',
    fn: (c, args) => {
      const out: Value[] = [];
      flatten(c, list(c, 'flatten', args, 0), out, 0);
      return out;
    },
  },
  sort: { min: 1, max: 2, cost: 'build', fn: (c, args) => sortValues(c, 'sort', [...list(c, 'sort', args, 0)], order(c, 'sort', args[1])) },
  jsonpath: {
    min: 2,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const doc = typeof args[0] === 'string' ? fromJsonText(c, 'jsonpath', args[0]) : args[0];
      return jsonPath(c, doc, str(c, 'jsonpath', args, 1));
    },
  },
  bitand: bitFn((a, b) => a & b),
  bitor: bitFn((a, b) => a | b),
  bitxor: bitFn((a, b) => a ^ b),
  bitnand: bitFn((a, b) => a & ~b),
  bitshl: bitFn((a, b) => a << b, true),
  bitshr: bitFn((a, b) => a >> b, true),
  bitushr: bitFn((a, b) => BigInt.asUintN(64, a) >> b, true),
  bitnot: {
    min: 1,
    max: 1,
    cost: 'pick',
    fn: (c, [a]) => (typeof a === 'bigint' ? ~a : argError(c, 'bitnot', 0, 'an int', a)),
  },
};

/** Builtins of expr-lang that plugflow leaves out on purpose, with the reason users see. */
export const UNSUPPORTED_BUILTINS: Record<string, string> = {
  now: 'date and time functions are not available in plugflow expressions (results must not depend on the clock)',
  date: 'date and time functions are not available in plugflow expressions',
  duration: 'date and time functions are not available in plugflow expressions',
  timezone: 'date and time functions are not available in plugflow expressions',
};
