import { int, list, str, type BuiltinDef } from './builtins-support.js';
import type { EvalContext } from './context.js';
import { typeName, utf8Length, type Value } from './values.js';

/**
 * String builtins of expr-lang. They follow Go's strings package: `trim` removes Unicode white
 * space, `split` with a limit keeps the rest in the last part, `replace` with "" inserts between
 * code points, and `indexOf` counts UTF-8 bytes. Every function that can grow a string checks
 * the size limit before building it.
 */

export const STRING_BUILTINS: Record<string, BuiltinDef> = {
  trim: {
    min: 1,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'trim', args, 0);
      if (args.length === 1) return s.replace(/^[\s\u0085]+|[\s\u0085]+$/gu, '');
      const cut = new Set(Array.from(str(c, 'trim', args, 1)));
      const chars = Array.from(s);
      let a = 0;
      let b = chars.length;
      while (a < b && cut.has(chars[a])) a++;
      while (b > a && cut.has(chars[b - 1])) b--;
      return chars.slice(a, b).join('');
    },
  },
  trimPrefix: {
    min: 1,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'trimPrefix', args, 0);
      const p = args.length > 1 ? str(c, 'trimPrefix', args, 1) : ' ';
      return s.startsWith(p) ? s.slice(p.length) : s;
    },
  },
  trimSuffix: {
    min: 1,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'trimSuffix', args, 0);
      const p = args.length > 1 ? str(c, 'trimSuffix', args, 1) : ' ';
      return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
    },
  },
  upper: { min: 1, max: 1, fn: (c, args) => str(c, 'upper', args, 0).toUpperCase() },
  lower: { min: 1, max: 1, fn: (c, args) => str(c, 'lower', args, 0).toLowerCase() },
  split: { min: 2, max: 3, fn: (c, args) => splitGo(c, 'split', args, false) },
  splitAfter: { min: 2, max: 3, fn: (c, args) => splitGo(c, 'splitAfter', args, true) },
  replace: {
    min: 3,
    max: 4,
    fn: (c, args) => {
      const s = str(c, 'replace', args, 0);
      const from = str(c, 'replace', args, 1);
      const to = str(c, 'replace', args, 2);
      const limit = args.length > 3 ? int(c, 'replace', args, 3) : -1;
      if (from === '') {
        // Go inserts `to` before every code point and at the end (up to `limit` times).
        const chars = Array.from(s);
        const n = limit < 0 ? chars.length + 1 : Math.min(limit, chars.length + 1);
        c.charge(chars.length);
        let out = '';
        for (let i = 0; i < chars.length; i++) out = c.checkString(out + (i < n ? to : '') + chars[i]);
        return c.checkString(out + (chars.length < n ? to : ''));
      }
      const parts = s.split(from);
      c.charge(parts.length);
      if (limit < 0 || parts.length <= limit + 1) return c.checkString(parts.join(to));
      return c.checkString(parts.slice(0, limit + 1).join(to) + from + parts.slice(limit + 1).join(from));
    },
  },
  repeat: {
    min: 2,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'repeat', args, 0);
      const n = int(c, 'repeat', args, 1);
      if (n < 0) return c.fail('call', `invalid argument for repeat (expected positive integer, got ${n})`);
      if (s.length * n > c.maxStringLength) return c.limit(`repeat would build a string longer than ${c.maxStringLength} characters`);
      return s.repeat(n);
    },
  },
  join: {
    min: 1,
    max: 2,
    fn: (c, args) => {
      const items = list(c, 'join', args, 0);
      const glue = args.length > 1 ? str(c, 'join', args, 1) : '';
      c.charge(items.length);
      const parts = items.map((v, i) => (typeof v === 'string' ? v : c.fail('type', `join: element ${i} must be a string, got ${typeName(v)}`)));
      return c.checkString(parts.join(glue));
    },
  },
  indexOf: {
    min: 2,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'indexOf', args, 0);
      const i = s.indexOf(str(c, 'indexOf', args, 1));
      return BigInt(i < 0 ? -1 : utf8Length(s.slice(0, i)));
    },
  },
  lastIndexOf: {
    min: 2,
    max: 2,
    fn: (c, args) => {
      const s = str(c, 'lastIndexOf', args, 0);
      const i = s.lastIndexOf(str(c, 'lastIndexOf', args, 1));
      return BigInt(i < 0 ? -1 : utf8Length(s.slice(0, i)));
    },
  },
  hasPrefix: { min: 2, max: 2, fn: (c, args) => str(c, 'hasPrefix', args, 0).startsWith(str(c, 'hasPrefix', args, 1)) },
  hasSuffix: { min: 2, max: 2, fn: (c, args) => str(c, 'hasSuffix', args, 0).endsWith(str(c, 'hasSuffix', args, 1)) },
};

/** Go's strings.Split/SplitN and SplitAfter/SplitAfterN. */
function splitGo(c: EvalContext, fn: string, args: Value[], after: boolean): Value {
  const s = str(c, fn, args, 0);
  const sep = str(c, fn, args, 1);
  const n = args.length > 2 ? int(c, fn, args, 2) : -1;
  if (n === 0) return [];
  let parts: string[];
  if (sep === '') {
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
