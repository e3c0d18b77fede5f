import { ExprError } from './errors.js';

/**
 * Tokenizer for the expression language (expr-lang's syntax). Hand-written so that every token
 * carries its exact offset, which the parser and the evaluator use for `line:column` and carets.
 */

export type TokenKind = 'number' | 'string' | 'ident' | 'op' | 'bracket' | 'eof';

export interface Token {
  kind: TokenKind;
  /** Source text of the token (for strings: the unescaped value). */
  value: string;
  start: number;
  end: number;
}

/** Words that are operators, not identifiers (they may still follow `.` as property names). */
export const OPERATOR_WORDS = new Set(['in', 'or', 'and', 'not', 'matches', 'contains', 'startsWith', 'endsWith', 'let']);

const SINGLE_OPS = ',;%+-^:';

function isIdentStart(ch: string): boolean {
  return /[A-Za-z_$]/.test(ch) || (ch > '\x7f' && /\p{L}/u.test(ch));
}

function isIdentPart(ch: string): boolean {
  return /[A-Za-z0-9_$]/.test(ch) || (ch > '\x7f' && /[\p{L}\p{Nd}]/u.test(ch));
}

function isDigit(ch: string): boolean {
  return ch >= '0' && ch <= '9';
}

export function tokenize(source: string, what?: string): Token[] {
  const tokens: Token[] = [];
  const n = source.length;
  let i = 0;
  const fail = (reason: string, offset: number, length = 1): never => {
    throw new ExprError({ code: 'syntax', reason, what, source, offset, length });
  };

  while (i < n) {
    const ch = source[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v' || ch === '\u00a0') {
      i++;
      continue;
    }
    const start = i;
    if (ch === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if (ch === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      if (close < 0) fail('unclosed comment', start, 2);
      i = close + 2;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const { value, end } = readQuoted(source, i, fail);
      tokens.push({ kind: 'string', value, start, end });
      i = end;
      continue;
    }
    if (ch === '`') {
      const close = source.indexOf('`', i + 1);
      if (close < 0) fail('unterminated raw string', start);
      tokens.push({ kind: 'string', value: source.slice(i + 1, close), start, end: close + 1 });
      i = close + 1;
      continue;
    }
    if (isDigit(ch) || (ch === '.' && isDigit(source[i + 1] ?? ''))) {
      i = readNumber(source, i, fail);
      tokens.push({ kind: 'number', value: source.slice(start, i), start, end: i });
      continue;
    }
    if (isIdentStart(ch)) {
      i++;
      while (i < n && isIdentPart(source[i])) i++;
      const word = source.slice(start, i);
      tokens.push({ kind: OPERATOR_WORDS.has(word) ? 'op' : 'ident', value: word, start, end: i });
      continue;
    }
    if (ch === '#') {
      // `#` is the predicate pointer; `#acc`, `#index` are named pointers (one token each side).
      tokens.push({ kind: 'op', value: '#', start, end: i + 1 });
      i++;
      continue;
    }
    if ('([{'.includes(ch) || ')]}'.includes(ch)) {
      tokens.push({ kind: 'bracket', value: ch, start, end: i + 1 });
      i++;
      continue;
    }
    const two = source.slice(i, i + 2);
    if (['?.', '??', '||', '&&', '==', '!=', '<=', '>=', '**', '..'].includes(two)) {
      tokens.push({ kind: 'op', value: two, start, end: i + 2 });
      i += 2;
      continue;
    }
    if (SINGLE_OPS.includes(ch) || '!=*<>?|./'.includes(ch)) {
      tokens.push({ kind: 'op', value: ch, start, end: i + 1 });
      i++;
      continue;
    }
    const cp = source.codePointAt(i) ?? 0;
    fail(`unrecognized character ${JSON.stringify(String.fromCodePoint(cp))} (U+${cp.toString(16).toUpperCase().padStart(4, '0')})`, start);
  }
  tokens.push({ kind: 'eof', value: '', start: n, end: n });
  return tokens;
}

function readNumber(source: string, i: number, fail: (r: string, o: number, l?: number) => never): number {
  const start = i;
  let digits = /[0-9_]/;
  if (source[i] === '0' && /[xXoObB]/.test(source[i + 1] ?? '')) {
    const p = source[i + 1].toLowerCase();
    digits = p === 'x' ? /[0-9a-fA-F_]/ : p === 'o' ? /[0-7_]/ : /[01_]/;
    i += 2;
    while (i < source.length && digits.test(source[i])) i++;
  } else {
    while (i < source.length && digits.test(source[i])) i++;
    // `1..3` is a range, not the float `1.` followed by `.3`.
    if (source[i] === '.' && source[i + 1] !== '.') {
      i++;
      while (i < source.length && digits.test(source[i])) i++;
    }
    if (source[i] === 'e' || source[i] === 'E') {
      i++;
      if (source[i] === '+' || source[i] === '-') i++;
      while (i < source.length && digits.test(source[i])) i++;
    }
  }
  if (i < source.length && isIdentPart(source[i])) {
    let end = i;
    while (end < source.length && isIdentPart(source[end])) end++;
    fail(`bad number syntax ${JSON.stringify(source.slice(start, end))}`, start, end - start);
  }
  return i;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
};

/** Reads a quoted string starting at `i`, with Go-style escapes (what expr-lang accepts). */
function readQuoted(source: string, i: number, fail: (r: string, o: number, l?: number) => never): { value: string; end: number } {
  const quote = source[i];
  const start = i;
  let out = '';
  i++;
  while (i < source.length) {
    const ch = source[i];
    if (ch === quote) return { value: out, end: i + 1 };
    if (ch === '\n') break;
    if (ch !== '\\') {
      out += ch;
      i++;
      continue;
    }
    const esc = source[i + 1];
    if (esc === undefined) break;
    if (Object.hasOwn(SIMPLE_ESCAPES, esc)) {
      out += SIMPLE_ESCAPES[esc];
      i += 2;
      continue;
    }
    const hexLen = esc === 'x' ? 2 : esc === 'u' ? 4 : esc === 'U' ? 8 : 0;
    if (hexLen > 0) {
      const hex = source.slice(i + 2, i + 2 + hexLen);
      if (hex.length !== hexLen || !/^[0-9a-fA-F]+$/.test(hex))
        fail(`invalid escape \\${esc}${hex}: expected ${hexLen} hex digits`, i, 2 + hex.length);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail(`escape \\${esc}${hex} is not a valid code point`, i, 2 + hexLen);
      out += String.fromCodePoint(cp);
      i += 2 + hexLen;
      continue;
    }
    if (esc >= '0' && esc <= '7') {
      const oct = source.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) fail('invalid octal escape: expected 3 octal digits', i, 1 + oct.length);
      const v = parseInt(oct, 8);
      if (v > 255) fail(`octal escape \\${oct} is out of range`, i, 4);
      out += String.fromCharCode(v);
      i += 4;
      continue;
    }
    fail(`invalid escape sequence \\${esc}`, i, 2);
  }
  return fail('string literal not terminated', start, 1);
}
