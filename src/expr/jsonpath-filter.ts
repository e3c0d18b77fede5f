import type { EvalContext } from './context.js';
import { compareStrings, isMap, valuesEqual, type Value } from './values.js';

/**
 * JSONPath filter expressions, `[?(...)]`: `@` is the element being tested, `$` the document.
 * Supported: paths `@.a.b`, `@['a']`, `@[0]`, `$.x`; literals (numbers, 'strings', "strings",
 * true, false, null); comparisons `== != < <= > >=`; `&& || !` and parentheses; a bare path
 * tests existence (`?(@.isbn)`). Parsed into a small tree by hand and interpreted: no eval, and
 * every element tested is charged to the evaluation's step budget by the caller.
 */

export type Filter =
  | { t: 'or' | 'and'; l: Filter; r: Filter }
  | { t: 'not'; x: Filter }
  | { t: 'cmp'; op: string; l: Operand; r: Operand }
  | { t: 'exists'; x: Operand };

type Operand = { t: 'path'; root: '@' | '$'; keys: (string | number)[] } | { t: 'lit'; v: Value };

/** A missing path: different from every value, null included. */
const MISSING = Symbol('missing');

/** Most operands and operators in one filter, and deepest nesting (keeps the interpreter's recursion shallow). */
const MAX_FILTER_SIZE = 200;
const MAX_FILTER_DEPTH = 32;

export function parseFilter(text: string, bad: (why: string) => never): { filter: Filter; size: number } {
  let i = 0;
  let size = 0;
  let depth = 0;
  const grow = () => {
    if (++size > MAX_FILTER_SIZE) bad(`filter has more than ${MAX_FILTER_SIZE} operands and operators`);
  };
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const peek = (s: string) => {
    ws();
    return text.startsWith(s, i);
  };
  const quoted = (): string => {
    const q = text[i];
    let out = '';
    i++;
    while (i < text.length && text[i] !== q) {
      if (text[i] === '\\' && i + 1 < text.length) i++;
      out += text[i++];
    }
    if (i >= text.length) bad(`unclosed string in filter`);
    i++;
    return out;
  };
  const operand = (): Operand => {
    ws();
    grow();
    const ch = text[i];
    if (ch === '@' || ch === '$') {
      i++;
      const keys: (string | number)[] = [];
      for (;;) {
        if (text[i] === '.' && /[A-Za-z0-9_\-$]/.test(text[i + 1] ?? '')) {
          const m = /^[A-Za-z0-9_\-$]+/.exec(text.slice(i + 1)) as RegExpExecArray;
          keys.push(m[0]);
          i += 1 + m[0].length;
        } else if (text[i] === '[') {
          i++;
          ws();
          if (text[i] === "'" || text[i] === '"') keys.push(quoted());
          else {
            const m = /^-?\d+/.exec(text.slice(i));
            if (!m) bad(`unsupported subscript in filter at ${i}`);
            keys.push(Number(m![0]));
            i += m![0].length;
          }
          ws();
          if (text[i] !== ']') bad(`expected "]" in filter at ${i}`);
          i++;
        } else break;
      }
      return { t: 'path', root: ch, keys };
    }
    if (ch === "'" || ch === '"') return { t: 'lit', v: quoted() };
    const num = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
    if (num) {
      i += num[0].length;
      return { t: 'lit', v: Number(num[0]) };
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i) && !/[A-Za-z0-9_]/.test(text[i + word.length] ?? '')) {
        i += word.length;
        return { t: 'lit', v };
      }
    }
    return bad(`unexpected ${JSON.stringify(text.slice(i, i + 10))} in filter`);
  };
  const nested = <T>(f: () => T): T => {
    if (++depth > MAX_FILTER_DEPTH) bad(`filter is nested more than ${MAX_FILTER_DEPTH} levels deep`);
    const out = f();
    depth--;
    return out;
  };
  const primary = (): Filter => {
    if (peek('!') && !peek('!=')) {
      i++;
      grow();
      return nested(() => ({ t: 'not', x: primary() }));
    }
    if (peek('(')) {
      i++;
      const inner = nested(or);
      if (!peek(')')) bad(`expected ")" in filter`);
      i++;
      return inner;
    }
    const l = operand();
    for (const op of ['==', '!=', '<=', '>=', '<', '>']) {
      if (peek(op)) {
        i += op.length;
        grow();
        return { t: 'cmp', op, l, r: operand() };
      }
    }
    if (l.t === 'lit') bad('a filter needs a comparison or a path');
    return { t: 'exists', x: l };
  };
  const and = (): Filter => {
    let l = primary();
    while (peek('&&')) {
      i += 2;
      l = { t: 'and', l, r: primary() };
    }
    return l;
  };
  const or = (): Filter => {
    let l = and();
    while (peek('||')) {
      i += 2;
      l = { t: 'or', l, r: and() };
    }
    return l;
  };
  const filter = or();
  ws();
  if (i < text.length) bad(`unexpected ${JSON.stringify(text.slice(i, i + 10))} in filter`);
  return { filter, size };
}

function resolve(op: Operand, elem: Value, doc: Value): Value | typeof MISSING {
  if (op.t === 'lit') return op.v;
  let cur: Value = op.root === '@' ? elem : doc;
  for (const k of op.keys) {
    if (typeof k === 'number') {
      if (!Array.isArray(cur)) return MISSING;
      const idx = k < 0 ? cur.length + k : k;
      if (idx < 0 || idx >= cur.length) return MISSING;
      cur = cur[idx] ?? null;
    } else {
      if (!isMap(cur) || !Object.hasOwn(cur, k)) return MISSING;
      cur = cur[k] ?? null;
    }
  }
  return cur === undefined ? null : cur;
}

const num = (v: Value): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);

/** Whether `elem` passes the filter. */
export function testFilter(c: EvalContext, f: Filter, elem: Value, doc: Value): boolean {
  switch (f.t) {
    case 'or':
      return testFilter(c, f.l, elem, doc) || testFilter(c, f.r, elem, doc);
    case 'and':
      return testFilter(c, f.l, elem, doc) && testFilter(c, f.r, elem, doc);
    case 'not':
      return !testFilter(c, f.x, elem, doc);
    case 'exists':
      return resolve(f.x, elem, doc) !== MISSING;
    case 'cmp': {
      const a = resolve(f.l, elem, doc);
      const b = resolve(f.r, elem, doc);
      if (a === MISSING || b === MISSING) return f.op === '!=' && a !== b;
      if (f.op === '==' || f.op === '!=') return valuesEqual(a, b, c) === (f.op === '==');
      let r: number;
      const x = num(a);
      const y = num(b);
      if (x !== null && y !== null) r = x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
      else if (typeof a === 'string' && typeof b === 'string') r = compareStrings(a, b);
      else return false;
      return f.op === '<' ? r < 0 : f.op === '<=' ? r <= 0 : f.op === '>' ? r > 0 : r >= 0;
    }
  }
}
