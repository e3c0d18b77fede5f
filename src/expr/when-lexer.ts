/** The lexer of the `when` dialect (when.ts): words (with their `{{…}}` tags kept as values), quoted strings, operators. */
import { compile, type CompiledExpression } from './compile.js';
import { ExprError, type ExprErrorCode } from './errors.js';
import { findExpressionEnd } from './tag-end.js';

export type Tag = { kind: 'simple'; name: string } | { kind: 'expr'; expr: CompiledExpression; exprStart: number };
export interface TagRef {
  tag: Tag;
  raw: string;
  start: number;
}
export type Piece = string | TagRef;

export type Tok =
  | { t: 'word'; parts: Piece[]; quoted: boolean; s: number; e: number }
  | { t: 'op'; v: string; s: number; e: number }
  | { t: 'eof'; s: number; e: number };

const WORD_CHAR = /[\p{L}\p{N}_.@/$]/u;

export const WHAT = 'when';

export function fail(text: string, code: ExprErrorCode, reason: string, s: number, e = s + 1): never {
  throw new ExprError({ code, what: WHAT, reason, source: text, offset: s, length: Math.max(1, e - s) });
}

export function lex(text: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const readTag = (open: number): { ref: TagRef; end: number } => {
    let j = open + 2;
    while (j < text.length && /\s/.test(text[j])) j++;
    if (text[j] === '=') {
      const close = findExpressionEnd(text, j + 1);
      if (close < 0) fail(text, 'syntax', 'unclosed {{= tag (no matching }})', open, open + 2);
      let expr: CompiledExpression;
      try {
        expr = compile(text.slice(j + 1, close), { what: WHAT });
      } catch (err) {
        throw err instanceof ExprError ? err.rebase(text, j + 1, WHAT) : err;
      }
      return { ref: { tag: { kind: 'expr', expr, exprStart: j + 1 }, raw: text.slice(open, close + 2), start: open }, end: close + 2 };
    }
    const close = text.indexOf('}}', open + 2);
    if (close < 0) fail(text, 'syntax', 'unclosed {{ tag (no matching }})', open, open + 2);
    const name = text.slice(open + 2, close).trim();
    if (!name) fail(text, 'syntax', 'empty {{}} tag', open, close + 2);
    return { ref: { tag: { kind: 'simple', name }, raw: text.slice(open, close + 2), start: open }, end: close + 2 };
  };

  while (i < text.length) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const s = i;
    if (ch === '"' || ch === "'") {
      const parts: Piece[] = [];
      let buf = '';
      i++;
      for (;;) {
        if (i >= text.length) fail(text, 'syntax', 'string literal not terminated', s);
        const c = text[i];
        if (c === ch) break;
        if (c === '\\' && i + 1 < text.length) {
          buf += text[i + 1];
          i += 2;
        } else if (text.startsWith('{{', i)) {
          if (buf) parts.push(buf);
          buf = '';
          const { ref, end } = readTag(i);
          parts.push(ref);
          i = end;
        } else {
          buf += c;
          i++;
        }
      }
      if (buf) parts.push(buf);
      toks.push({ t: 'word', parts, quoted: true, s, e: i + 1 });
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (['&&', '||', '==', '!=', '<=', '>=', '=~', '!~'].includes(two)) {
      toks.push({ t: 'op', v: two, s, e: i + 2 });
      i += 2;
      continue;
    }
    if ('!<>()+-*/%,'.includes(ch) && !(ch === '-' && /\d/.test(text[i + 1] ?? '') && prevIsOperator(toks))) {
      toks.push({ t: 'op', v: ch, s, e: i + 1 });
      i++;
      continue;
    }
    if (text.startsWith('{{', i) || WORD_CHAR.test(ch) || ch === '-') {
      const parts: Piece[] = [];
      let buf = '';
      const num = NUMBER_PREFIX.exec(text.slice(i));
      if (num) {
        buf = num[0];
        i += buf.length;
      }
      while (i < text.length) {
        if (text.startsWith('{{', i)) {
          if (buf) parts.push(buf);
          buf = '';
          const { ref, end } = readTag(i);
          parts.push(ref);
          i = end;
        } else if (
          WORD_CHAR.test(text[i]) ||
          (text[i] === '-' && !num && i + 1 < text.length && (WORD_CHAR.test(text[i + 1]) || text.startsWith('{{', i + 1)))
        ) {
          buf += text[i++];
        } else break;
      }
      if (buf) parts.push(buf);
      const word = parts.length === 1 && typeof parts[0] === 'string' ? parts[0] : null;
      if (word === 'in' || word === 'IN') toks.push({ t: 'op', v: 'in', s, e: i });
      else toks.push({ t: 'word', parts, quoted: false, s, e: i });
      continue;
    }
    fail(text, 'syntax', `unexpected character ${JSON.stringify(ch)} (quote strings that contain it)`, s);
  }
  toks.push({ t: 'eof', s: text.length, e: text.length });
  return toks;
}

const NUMBER_PREFIX = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(?![\p{L}_])/u;

function prevIsOperator(toks: Tok[]): boolean {
  const prev = toks[toks.length - 1];
  return !prev || (prev.t === 'op' && prev.v !== ')');
}
