import type { EvalContext } from './context.js';
import { isMap, type Value } from './values.js';

/**
 * The cost model. Every evaluation has two budgets (limits.ts): steps, a proxy for CPU time, and
 * memory, an estimate of the bytes of everything it builds. The rule that keeps any expression
 * within a bounded time and memory is simple: **no operation does work or builds a value that it
 * does not pay for**. An element (list item, map key, predicate iteration) is one step; sixteen
 * characters of a string are one step; a built list costs 16 bytes per element, a map 64 bytes
 * per key (plus 160 for the map itself), a string 2 bytes per character. Operations that cost
 * more per element than a property read (parsing JSON, regular expressions, building bigints,
 * inserting into hash tables) charge more steps, calibrated so that 1,000,000 steps — the
 * default budget — take well under 250 ms of CPU on the slowest of them.
 *
 * Builtins cannot forget this, because every builtin call goes through `callBuiltin` and every
 * builtin declares its cost class (the field is required):
 * - `pick`: constant work, the result is a scalar or a part of an argument (`first`, `get`,
 *   `type`). One step per call; anything more the function charges itself.
 * - `scan`: reads its arguments once, the result is a scalar or a part of an argument (`has`,
 *   `indexOf`, `sha256sum`). The shallow size of every argument is charged before it runs.
 * - `build`: like scan, and the result is a new value: its shallow size is charged after it runs.
 * Work beyond one pass (sorting, pairwise comparison, deep walks) is charged by the function,
 * through the walkers that already meter themselves (equality, JSON, formatting, regex). Every
 * string a builtin returns is checked against the string size limit, and a RangeError from the
 * JS engine (a string or list too long to build) becomes a limit ExprError naming the builtin.
 */

export type Cost = 'pick' | 'scan' | 'build';

/** Characters of a string that cost one step to read or write. */
export const CHARS_PER_STEP = 16;
/** Strings up to this length are read for free (compared, hashed, matched): one step covers them. */
export const SHORT_STRING = 64;
/**
 * Steps per key to list the keys of a map: maps from JSON and maps without prototype are hash
 * tables in V8, and listing them sorts by insertion order — several times a list element's cost.
 */
export const KEY_STEPS = 4;
/** Estimated bytes per element of a list, per key of a map, per character of a string. */
export const ELEMENT_BYTES = 16;
export const KEY_BYTES = 64;
/** A map's own header (maps without prototype are hash tables in V8). */
export const MAP_BYTES = 160;
export const CHAR_BYTES = 2;

/** Steps to read `n` characters. */
export function charSteps(n: number): number {
  return n > SHORT_STRING ? Math.ceil(n / CHARS_PER_STEP) : 0;
}

/** Charges reading one argument once: a list by its length, a map by its keys, a string by its characters. */
export function chargeRead(c: EvalContext, v: Value): void {
  if (typeof v === 'string') c.charge(charSteps(v.length));
  else if (Array.isArray(v)) c.charge(v.length);
  else if (isMap(v)) c.charge(Object.keys(v).length * KEY_STEPS);
}

/** Charges a value just built: steps to write it and its estimated bytes against the memory budget. */
export function chargeBuilt(c: EvalContext, v: Value): void {
  if (typeof v === 'string') {
    c.charge(charSteps(v.length));
    c.alloc(v.length * CHAR_BYTES);
  } else if (Array.isArray(v)) {
    c.charge(v.length);
    c.alloc(v.length * ELEMENT_BYTES);
  } else if (isMap(v)) {
    const n = Object.keys(v).length;
    c.charge(n * KEY_STEPS);
    c.alloc(MAP_BYTES + n * KEY_BYTES);
  }
}

/**
 * Charges the work of a string about to be built of `length` characters, failing before it is
 * built when too long (its memory is charged by callBuiltin with the result).
 */
export function chargeNewString(c: EvalContext, length: number, fn: string): void {
  if (length > c.maxStringLength) c.limit(`${fn} would build a string longer than ${c.maxStringLength} characters`);
  c.charge(charSteps(length));
}

/**
 * Charges a string about to become a map key: V8 hashes and interns keys, a copy of a long one.
 * Every place that turns a computed string into a key (map literals, dict, set, fromPairs,
 * groupBy) goes through here.
 */
export function chargeKey(c: EvalContext, key: string): string {
  if (key.length > SHORT_STRING) {
    c.charge(charSteps(key.length) * 2);
    c.alloc(key.length * CHAR_BYTES);
  }
  return key;
}

/** Joins strings after checking the length of the result, so an oversized join never allocates. */
export function joinChecked(c: EvalContext, parts: readonly string[], glue: string, fn: string): string {
  let length = parts.length > 0 ? (parts.length - 1) * glue.length : 0;
  for (const p of parts) length += p.length;
  if (length > c.maxStringLength) c.limit(`${fn} would build a string longer than ${c.maxStringLength} characters`);
  return parts.join(glue);
}

export interface CostedBuiltin {
  cost: Cost;
  fn: (c: EvalContext, args: Value[]) => Value;
}

/** The only way builtins are called: charges by cost class, checks what comes out. */
export function callBuiltin(c: EvalContext, label: string, def: CostedBuiltin, args: Value[]): Value {
  if (def.cost === 'pick') c.charge(1);
  else {
    c.charge(1);
    for (let i = 0; i < args.length; i++) chargeRead(c, args[i]);
  }
  let out: Value;
  try {
    out = def.fn(c, args);
  } catch (err) {
    if (err instanceof RangeError) return c.limit(`${label}: the result would be too large (${err.message})`);
    throw err;
  }
  if (out === undefined) return null;
  if (typeof out === 'string') {
    if (out.length > c.maxStringLength) return c.limit(`${label}: result string would be longer than ${c.maxStringLength} characters`);
  } else if (typeof out !== 'object' || out === null) return out;
  if (def.cost === 'build' && !isArgument(out, args)) chargeBuilt(c, out);
  return out;
}

function isArgument(v: Value, args: Value[]): boolean {
  if (typeof v !== 'object' || v === null) return false;
  for (let i = 0; i < args.length; i++) if (args[i] === v) return true;
  return false;
}
