import type { EvalContext } from './context.js';
import type { Cost } from './cost.js';
import { ExprError } from './errors.js';
import { describeValue, formatGoFloat } from './format.js';
import { Regex, RegexSyntaxError } from './regex/vm.js';
import { isMap, newMap, typeName, type Value, type ValueMap } from './values.js';

export { compareCharged } from './values.js';

/** Shared argument checks and conversions for builtin and sprig functions. */

export interface BuiltinDef {
  min: number;
  max: number;
  /** How the call is charged (cost.ts); required, so no builtin runs unmetered. */
  cost: Cost;
  fn: (c: EvalContext, args: Value[]) => Value;
}

export function argError(c: EvalContext, fn: string, index: number, expected: string, got: Value): never {
  return c.fail('type', `${fn}: argument ${index + 1} must be ${expected}, got ${typeName(got)}`);
}

export function str(c: EvalContext, fn: string, args: Value[], i: number): string {
  const v = args[i];
  return typeof v === 'string' ? v : argError(c, fn, i, 'a string', v);
}

export function list(c: EvalContext, fn: string, args: Value[], i: number): readonly Value[] {
  const v = args[i];
  return Array.isArray(v) ? (v as readonly Value[]) : argError(c, fn, i, 'an array', v);
}

export function map(c: EvalContext, fn: string, args: Value[], i: number): ValueMap {
  const v = args[i];
  return isMap(v) ? v : argError(c, fn, i, 'a map', v);
}

/** An integer argument (ints, and floats truncated, as Go's ToInt does). */
export function int(c: EvalContext, fn: string, args: Value[], i: number): number {
  const v = args[i];
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  return argError(c, fn, i, 'an integer', v);
}

/** Converts a float to int like Go's int(x): truncation toward zero, wrapped to 64 bits. */
export function floatToInt(x: number): bigint {
  if (!Number.isFinite(x)) return -0x8000000000000000n;
  return BigInt.asIntN(64, BigInt(Math.trunc(x)));
}

/** Go's strconv.Atoi: optional sign and decimal digits only. */
export function parseGoInt(s: string): bigint | null {
  if (!/^[+-]?\d+$/.test(s)) return null;
  const v = BigInt(s);
  if (v > 0x7fffffffffffffffn || v < -0x8000000000000000n) return null;
  return v;
}

/** Go's strconv.ParseFloat: decimal or hex floats, inf and nan spellings, underscores not allowed. */
export function parseGoFloat(s: string): number | null {
  const t = s.trim() === s ? s : '';
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(t)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}

/** A copy of a map; the caller has charged reading it (cost class scan or build). */
export function copyMap(m: ValueMap): Record<string, Value> {
  const out = newMap();
  for (const k of Object.keys(m)) out[k] = m[k];
  return out;
}

/** Map keys for groupBy and similar: strings as is, numbers and bools in Go's %v form. */
export function keyString(c: EvalContext, fn: string, v: Value): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatGoFloat(v);
  return c.fail('type', `${fn}: a key must be a string, number or bool, got ${typeName(v)}`);
}

const regexCache = new Map<string, Regex | ExprError>();
/** The cache holds at most this many instructions in all (a few MiB), whatever the patterns. */
const MAX_CACHED_INSTRUCTIONS = 100_000;
let cachedInstructions = 0;

/**
 * Compiles a pattern with the linear-time engine. Patterns computed at run time are cached
 * (bounded), so a selector that builds its pattern does not recompile it per event.
 */
export function regexFor(c: EvalContext, pattern: string): Regex {
  const key = `${c.limits.maxRegexProgram}\u0000${pattern}`;
  let hit = regexCache.get(key);
  if (hit === undefined) {
    // Compiling is charged by the pattern and by the program it expands to, so building a new
    // pattern per iteration of a loop runs out of steps instead of compiling without end.
    c.charge(pattern.length * 4);
    try {
      hit = Regex.compile(pattern, c.limits.maxRegexProgram);
      c.charge(hit.size * 4);
      c.alloc(hit.size * 64);
    } catch (err) {
      if (!(err instanceof RegexSyntaxError)) throw err;
      // The pattern is a runtime value (it may come from an event): its type and size only.
      hit = new ExprError({ code: 'regex', reason: `invalid regular expression (${describeValue(pattern)}) at offset ${err.offset}` });
    }
    const size = (h: Regex | ExprError) => (h instanceof Regex ? h.size : 1);
    while (regexCache.size > 0 && (regexCache.size >= 256 || cachedInstructions + size(hit) > MAX_CACHED_INSTRUCTIONS)) {
      const oldest = regexCache.keys().next().value as string;
      cachedInstructions -= size(regexCache.get(oldest) as Regex | ExprError);
      regexCache.delete(oldest);
    }
    if (size(hit) <= MAX_CACHED_INSTRUCTIONS) {
      regexCache.set(key, hit);
      cachedInstructions += size(hit);
    }
  }
  if (hit instanceof ExprError) return c.fail('regex', hit.reason);
  return hit;
}
