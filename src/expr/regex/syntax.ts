/**
 * Parser for regular expressions in RE2 syntax (what Go's regexp, and so the peer system,
 * accepts). JS RegExp is not used on user patterns: it backtracks, so a pattern such as
 * `(a+)+$` against a long payload string could hang the server. The parsed tree is compiled to
 * a program for a Pike VM (see vm.ts), whose run time is linear in the input.
 */

import { caseVariants, foldTest, isWordCp, PERL, POSIX, rangeTest, RegexSyntaxError, unicodeTest, type CharTest } from './charclass.js';

export { RegexSyntaxError, type CharTest };

export type Re =
  | { t: 'empty' }
  | { t: 'char'; test: CharTest }
  | { t: 'assert'; kind: 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'nonword' }
  | { t: 'cat'; items: Re[] }
  | { t: 'alt'; items: Re[] }
  | { t: 'rep'; item: Re; min: number; max: number; greedy: boolean }
  | { t: 'group'; item: Re; index: number; name: string };

export interface ParsedRegex {
  re: Re;
  groupCount: number;
  groupNames: string[];
}

export { isWordCp };

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

const MAX_REPEAT = 1000;

export function parseRegex(pattern: string): ParsedRegex {
  const cps = Array.from(pattern);
  let pos = 0;
  let groupCount = 0;
  const groupNames: string[] = [''];
  const err = (msg: string, at = pos): never => {
    throw new RegexSyntaxError(msg, at);
  };
  const peek = (): string | undefined => cps[pos];
  const eat = (s: string): boolean => {
    if (cps[pos] === s) {
      pos++;
      return true;
    }
    return false;
  };

  const parseAlt = (flags: Flags): Re => {
    const items: Re[] = [parseCat(flags)];
    while (eat('|')) items.push(parseCat(flags));
    return items.length === 1 ? items[0] : { t: 'alt', items };
  };

  const parseCat = (flags: Flags): Re => {
    const items: Re[] = [];
    for (;;) {
      const c = peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '(' && cps[pos + 1] === '?' && isFlagGroup()) {
        // `(?i)` changes flags for the rest of the current group.
        const start = pos;
        pos += 2;
        const next = readFlags(flags, start);
        if (!eat(')')) err('missing closing ) in flag group', start);
        Object.assign(flags, next);
        continue;
      }
      let atom = parseAtom(flags);
      atom = parseRepeats(atom, flags);
      items.push(atom);
    }
    if (items.length === 0) return { t: 'empty' };
    return items.length === 1 ? items[0] : { t: 'cat', items };
  };

  const isFlagGroup = (): boolean => {
    let i = pos + 2;
    while (i < cps.length && /[imsU-]/.test(cps[i])) i++;
    return cps[i] === ')';
  };

  const readFlags = (flags: Flags, start: number): Flags => {
    const out = { ...flags };
    let negate = false;
    let any = false;
    while (pos < cps.length && /[imsU-]/.test(cps[pos])) {
      const f = cps[pos++];
      if (f === '-') {
        if (negate) err('invalid flag group (two "-")', start);
        negate = true;
        continue;
      }
      any = true;
      out[f as keyof Flags] = !negate;
    }
    if (!any) err('empty flag group', start);
    return out;
  };

  const parseRepeats = (atom: Re, flags: Flags): Re => {
    let repeated = false;
    for (;;) {
      const c = peek();
      const start = pos;
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, -1];
      else if (c === '+') [min, max] = [1, -1];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(cps.slice(pos, pos + 16).join(''));
        if (!m) return atom; // a "{" that is not a repeat is a literal, as in RE2
        min = Number(m[1]);
        max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
        if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && max < min)) err(`invalid repeat count ${m[0]}`, start);
        pos += Array.from(m[0]).length - 1;
      } else return atom;
      pos++;
      if (repeated) err(`invalid nested repetition operator ${JSON.stringify(cps.slice(start, pos).join(''))}`, start);
      if (atom.t === 'empty') err('missing argument to repetition operator', start);
      let greedy = true;
      if (eat('?')) greedy = false;
      if (flags.U) greedy = !greedy;
      atom = { t: 'rep', item: atom, min, max, greedy };
      repeated = true;
    }
  };

  const parseAtom = (flags: Flags): Re => {
    const start = pos;
    const c = cps[pos++];
    switch (c) {
      case '(': {
        let name = '';
        let capture = true;
        let inner = flags;
        if (eat('?')) {
          if (eat(':')) capture = false;
          else if (peek() === 'P' || peek() === '<') {
            eat('P');
            if (!eat('<')) err('invalid named capture', start);
            const close = cps.indexOf('>', pos);
            if (close < 0) err('invalid named capture', start);
            name = cps.slice(pos, close).join('');
            if (!/^[A-Za-z0-9_]+$/.test(name)) err(`invalid capture group name ${JSON.stringify(name)}`, start);
            if (groupNames.includes(name)) err(`duplicate capture group name ${JSON.stringify(name)}`, start);
            pos = close + 1;
          } else {
            if (!/[imsU-]/.test(peek() ?? ''))
              err('invalid or unsupported group syntax (lookaround and backreferences are not supported)', start);
            inner = readFlags(flags, start);
            if (!eat(':')) err('invalid or unsupported group syntax (lookaround and backreferences are not supported)', start);
            capture = false;
          }
        }
        const index = capture ? ++groupCount : 0;
        if (capture) groupNames[index] = name;
        const item = parseAlt({ ...inner });
        if (!eat(')')) err('missing closing )', start);
        return capture ? { t: 'group', item, index, name } : item;
      }
      case ')':
        return err('unexpected )', start);
      case '.':
        return flags.s ? { t: 'char', test: () => true } : { t: 'char', test: (cp) => cp !== 10 };
      case '^':
        return { t: 'assert', kind: flags.m ? 'bol' : 'bot' };
      case '$':
        return { t: 'assert', kind: flags.m ? 'eol' : 'eot' };
      case '[':
        return { t: 'char', test: parseClass(start, flags.i) };
      case '*':
      case '+':
      case '?':
        return err('missing argument to repetition operator', start);
      case '\\':
        return parseEscape(flags, start);
      default: {
        const cp = c.codePointAt(0) as number;
        return literal(cp, flags.i);
      }
    }
  };

  const literal = (cp: number, fold: boolean): Re => {
    if (!fold) return { t: 'char', test: (x) => x === cp };
    const vs = caseVariants(cp);
    return { t: 'char', test: (x) => vs.includes(x) || caseVariants(x).includes(cp) };
  };

  const parseEscape = (flags: Flags, start: number): Re => {
    const c = cps[pos];
    if (c === undefined) return err('trailing backslash at end of expression', start);
    switch (c) {
      case 'A':
        pos++;
        return { t: 'assert', kind: 'bot' };
      case 'z':
        pos++;
        return { t: 'assert', kind: 'eot' };
      case 'b':
        pos++;
        return { t: 'assert', kind: 'word' };
      case 'B':
        pos++;
        return { t: 'assert', kind: 'nonword' };
      case 'Q': {
        pos++;
        let end = cps.indexOf('\\', pos);
        while (end >= 0 && cps[end + 1] !== 'E') end = cps.indexOf('\\', end + 1);
        const text = cps.slice(pos, end < 0 ? cps.length : end);
        pos = end < 0 ? cps.length : end + 2;
        const items = text.map((ch) => literal(ch.codePointAt(0) as number, flags.i));
        return items.length === 1 ? items[0] : { t: 'cat', items };
      }
      default: {
        const test = classEscape(start);
        if (test) return { t: 'char', test: foldTest(test, flags.i) };
        return literal(escapedChar(start), flags.i);
      }
    }
  };

  /** \d \s \w \p{..} and their negations; advances past them. */
  const classEscape = (start: number): CharTest | null => {
    const c = cps[pos];
    const lower = c.toLowerCase();
    if (Object.hasOwn(PERL, lower) && (c === lower || c === lower.toUpperCase())) {
      pos++;
      const t = rangeTest(PERL[lower]);
      return c === lower ? t : (cp) => !t(cp);
    }
    if (c === 'p' || c === 'P') {
      pos++;
      let name: string;
      if (eat('{')) {
        const close = cps.indexOf('}', pos);
        if (close < 0) err('invalid character class range', start);
        name = cps.slice(pos, close).join('');
        pos = close + 1;
      } else {
        name = cps[pos++] ?? '';
      }
      let negate = c === 'P';
      if (name.startsWith('^')) {
        negate = !negate;
        name = name.slice(1);
      }
      const t = unicodeTest(name, start);
      return negate ? (cp) => !t(cp) : t;
    }
    return null;
  };

  /** A single escaped character (not a class); advances past it. */
  const escapedChar = (start: number): number => {
    const c = cps[pos++];
    const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
    if (Object.hasOwn(simple, c)) return simple[c];
    if (c >= '0' && c <= '7') {
      let digits = c;
      while (digits.length < 3 && cps[pos] >= '0' && cps[pos] <= '7') digits += cps[pos++];
      if (c !== '0' && digits.length === 1) err('backreferences are not supported', start);
      return parseInt(digits, 8);
    }
    if (c === 'x') {
      let hex: string;
      if (eat('{')) {
        const close = cps.indexOf('}', pos);
        if (close < 0) err('invalid escape sequence', start);
        hex = cps.slice(pos, close).join('');
        pos = close + 1;
      } else {
        hex = cps.slice(pos, pos + 2).join('');
        pos += 2;
      }
      const v = parseInt(hex, 16);
      if (!/^[0-9a-fA-F]{1,6}$/.test(hex) || v > 0x10ffff) err('invalid escape sequence', start);
      return v;
    }
    if (/[A-Za-z0-9]/.test(c)) err(`invalid escape sequence \\${c}`, start);
    return c.codePointAt(0) as number;
  };

  const parseClass = (start: number, fold: boolean): CharTest => {
    const negate = eat('^');
    const tests: CharTest[] = [];
    const ranges: [number, number][] = [];
    let first = true;
    for (;;) {
      const c = cps[pos];
      if (c === undefined) err('missing closing ] in character class', start);
      if (c === ']' && !first) {
        pos++;
        break;
      }
      first = false;
      if (c === '[' && cps[pos + 1] === ':') {
        const close = cps.indexOf(']', pos);
        const body = cps.slice(pos + 2, close - 1).join('');
        if (close > 0 && cps[close - 1] === ':') {
          const neg = body.startsWith('^');
          const name = neg ? body.slice(1) : body;
          const r = Object.hasOwn(POSIX, name) ? POSIX[name] : err(`invalid character class range [:${body}:]`, pos);
          const t = rangeTest(r);
          tests.push(neg ? (cp) => !t(cp) : t);
          pos = close + 1;
          continue;
        }
      }
      let lo: number;
      if (c === '\\') {
        pos++;
        const t = classEscape(pos - 1);
        if (t) {
          tests.push(t);
          continue;
        }
        lo = escapedChar(pos - 1);
      } else {
        lo = c.codePointAt(0) as number;
        pos++;
      }
      let hi = lo;
      if (cps[pos] === '-' && cps[pos + 1] !== undefined && cps[pos + 1] !== ']') {
        pos++;
        const d = cps[pos];
        if (d === '\\') {
          pos++;
          hi = escapedChar(pos - 1);
        } else {
          hi = d.codePointAt(0) as number;
          pos++;
        }
        if (hi < lo) err(`invalid character class range ${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)}`, start);
      }
      ranges.push([lo, hi]);
    }
    const rt = rangeTest(ranges);
    // Case folding applies to the members of the class, before any negation (as in RE2).
    const test = foldTest((cp) => rt(cp) || tests.some((t) => t(cp)), fold);
    return negate ? (cp) => !test(cp) : test;
  };

  const re = parseAlt({ i: false, m: false, s: false, U: false });
  if (pos < cps.length) err('unexpected )', pos);
  return { re, groupCount, groupNames };
}
