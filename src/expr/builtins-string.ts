import { int, list, str, type BuiltinDef } from './builtins-support.js';
import type { EvalContext } from './context.js';
import { chargeNewString, joinChecked } from './cost.js';
import { typeName, utf8Length, type Value } from './values.js';

/**
 * String builtins of expr-lang. They follow Go's strings package: `trim` removes Unicode white
 * space, `split` with a limit keeps the rest in the last part, `replace` with "" inserts between
 * code points, and `indexOf` counts UTF-8 bytes. Every function that can grow a string checks
 * the size limit before building it (cost.ts charges the rest: what they read and build).
 */

/** Go's strings.Trim with a cutset: code points in the set are cut from both ends. */
export function trimCutset(c: EvalContext, s: string, cutset: string): string {
  c.charge(cutset.length >> 1); // a set insert per code point of the cutset
  const cut = new Set<string>();
  for (const ch of cutset) cut.add(ch);
  let a = 0;
  let b = s.length;
  while (a < b) {
    const ch = String.fromCodePoint(s.codePointAt(a) as number);
    if (!cut.has(ch)) break;
    a += ch.length;
  }
  while (b > a) {
    const low = s.charCodeAt(b - 1);
    const width = low >= 0xdc00 && low <= 0xdfff && b - 2 >= a ? 2 : 1;
    if (!cut.has(s.slice(b - width, b))) break;
    b -= width;
  }
  c.charge(s.length - (b - a)); // one step per code unit cut: each is a set lookup
  return s.slice(a, b);
}

export const STRING_BUILTINS: Record<string, BuiltinDef> = {
  trim: {
    min: 1,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'trim', args, 0);
      if (args.length === 1) return s.replace(/^[\s\u0085]+|[\s\u0085]+$/gu, '');
      return trimCutset(c, s, str(c, 'trim', args, 1));
    },
  },
  trimPrefix: {
    min: 1,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'trimPrefix', args, 0);
      const p = args.length > 1 ? str(c, 'trimPrefix', args, 1) : ' ';
      return s.startsWith(p) ? s.slice(p.length) : s;
    },
  },
  trimSuffix: {
    min: 1,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'trimSuffix', args, 0);
      const p = args.length > 1 ? str(c, 'trimSuffix', args, 1) : ' ';
      return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
    },
  },
  upper: { min: 1, max: 1, cost: 'build', fn: (c, args) => str(c, 'upper', args, 0).toUpperCase() },
  lower: { min: 1, max: 1, cost: 'build', fn: (c, args) => str(c, 'lower', args, 0).toLowerCase() },
  split: { min: 2, max: 3, cost: 'build', fn: (c, args) => splitGo(c, 'split', args, false) },
  splitAfter: { min: 2, max: 3, cost: 'build', fn: (c, args) => splitGo(c, 'splitAfter', args, true) },
  replace: {
    min: 3,
    max: 4,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'replace', args, 0);
      const from = str(c, 'replace', args, 1);
      const to = str(c, 'replace', args, 2);
      const limit = args.length > 3 ? int(c, 'replace', args, 3) : -1;
      return replaceGo(c, 'replace', s, from, to, limit);
    },
  },
  repeat: {
    min: 2,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const s = str(c, 'repeat', args, 0);
      const n = int(c, 'repeat', args, 1);
      if (n < 0) return c.fail('call', `invalid argument for repeat (expected positive integer, got ${n})`);
      chargeNewString(c, s.length * n, 'repeat');
      return s.repeat(n);
    },
  },
  join: {
    min: 1,
    max: 2,
    cost: 'build',
    fn: (c, args) => {
      const items = list(c, 'join', args, 0);
      const glue = args.length > 1 ? str(c, 'join', args, 1) : '';
      const parts = items.map((v, i) =>
        typeof v === 'string' ? v : c.fail('type', `join: element ${i} must be a string, got ${typeName(v)}`),
      );
      return joinChecked(c, parts, glue, 'join');
    },
  },
  indexOf: {
    min: 2,
    max: 2,
    cost: 'scan',
    fn: (c, args) => {
      const s = str(c, 'indexOf', args, 0);
      const i = s.indexOf(str(c, 'indexOf', args, 1));
      return BigInt(i < 0 ? -1 : utf8Length(s.slice(0, i)));
    },
  },
  lastIndexOf: {
    min: 2,
    max: 2,
    cost: 'scan',
    fn: (c, args) => {
      const s = str(c, 'lastIndexOf', args, 0);
      const i = s.lastIndexOf(str(c, 'lastIndexOf', args, 1));
      return BigInt(i < 0 ? -1 : utf8Length(s.slice(0, i)));
    },
  },
  hasPrefix: { min: 2, max: 2, cost: 'scan', fn: (c, args) => str(c, 'hasPrefix', args, 0).startsWith(str(c, 'hasPrefix', args, 1)) },
  hasSuffix: { min: 2, max: 2, cost: 'scan', fn: (c, args) => str(c, 'hasSuffix', args, 0).endsWith(str(c, 'hasSuffix', args, 1)) },
};

/**
 * Go's strings.Replace: `limit` < 0 replaces all. An empty `from` inserts `to` before every code
 * point and at the end. The result's length is computed first, so an oversized result fails
 * before anything is built.
 */
export function replaceGo(c: EvalContext, fn: string, s: string, from: string, to: string, limit: number): string {
  if (from === '') {
    const chars = Array.from(s);
    c.charge(chars.length);
    const n = limit < 0 ? chars.length + 1 : Math.min(limit, chars.length + 1);
    chargeNewString(c, s.length + n * to.length, fn);
    if (n === 0) return s;
    if (n === chars.length + 1) return chars.length === 0 ? to : to + chars.join(to) + to;
    return to + chars.slice(0, n).join(to) + chars.slice(n).join('');
  }
  const parts = s.split(from);
  c.charge(parts.length);
  const n = limit < 0 ? parts.length - 1 : Math.min(limit, parts.length - 1);
  chargeNewString(c, s.length + n * (to.length - from.length), fn);
  if (n === parts.length - 1) return parts.join(to);
  return parts.slice(0, n + 1).join(to) + from + parts.slice(n + 1).join(from);
}

/** Go's strings.Split/SplitN and SplitAfter/SplitAfterN. */
function splitGo(c: EvalContext, fn: string, args: Value[], after: boolean): Value {
  const s = str(c, fn, args, 0);
  const sep = str(c, fn, args, 1);
  const n = args.length > 2 ? int(c, fn, args, 2) : -1;
  if (n === 0) return [];
  let parts: string[];
  if (sep === '') {
    c.charge(s.length); // one element per code point: paid before the list is built
    parts = Array.from(s);
    if (n > 0 && parts.length > n) parts = [...parts.slice(0, n - 1), parts.slice(n - 1).join('')];
  } else {
    const all = s.split(sep);
    parts = n > 0 && all.length > n ? [...all.slice(0, n - 1), all.slice(n - 1).join(sep)] : all;
    if (after) parts = parts.map((p, i) => (i < parts.length - 1 ? p + sep : p));
  }
  c.charge(parts.length);
  return parts;
}
