import { standaloneMeter } from './contracts.js';
import { ExprError, lineColumn } from './errors.js';
import { formatGoFloat, toJson } from './format.js';
import { Regex, RegexSyntaxError } from './regex/vm.js';
import { DEFAULT_LIMITS } from './limits.js';
import { expandVars, type FlatVars } from './vars.js';
import type { Value } from './values.js';
import { fail, lex, WHAT, type Piece, type TagRef, type Tok } from './when-lexer.js';

/**
 * The `when` dialect of steps and DAG tasks (the peer evaluates it with govaluate after
 * substituting `{{…}}`): bare words are strings (`{{x}} == heads`), numbers compare as
 * numbers (`5.0 == 5`), `true`/`false` are booleans, `=~` / `!~` match regular expressions,
 * `in (a, b)` tests membership, with `&&`, `||`, `!`, comparisons, `+ - * / %` and parentheses.
 *
 * Tags are substituted as values, not as text: an unquoted `{{x}}` always stands for exactly one
 * operand whatever its value holds, so a parameter that came from an event payload cannot
 * inject operators into the condition. Inside quotes a tag's value becomes part of the string.
 */

type WNode =
  | { k: 'word'; parts: Piece[]; quoted: boolean; s: number; e: number }
  | { k: 'list'; items: WNode[]; s: number; e: number }
  | { k: 'not' | 'neg'; a: WNode; s: number; e: number }
  | { k: 'bin'; op: string; l: WNode; r: WNode; s: number; e: number };

type WValue = { v: string | number | boolean; text: string } | { list: WValue[] };

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export interface CompiledWhen {
  readonly text: string;
  evaluate(vars: FlatVars): boolean;
}

const LEVELS: string[][] = [['||'], ['&&'], ['==', '!=', '<', '<=', '>', '>=', '=~', '!~', 'in'], ['+', '-'], ['*', '/', '%']];

function parseWhen(text: string, toks: Tok[]): WNode {
  let pos = 0;
  let depth = 0;
  const cur = (): Tok => toks[pos];
  const isOp = (v: string): boolean => cur().t === 'op' && (cur() as { v: string }).v === v;
  const level = (n: number): WNode => {
    if (n === LEVELS.length) return unary();
    let left = level(n + 1);
    for (;;) {
      const t = cur();
      if (t.t !== 'op' || !LEVELS[n].includes(t.v)) return left;
      pos++;
      const right = level(n + 1);
      left = { k: 'bin', op: t.v, l: left, r: right, s: t.s, e: t.e };
      if (n === 2) return left; // comparisons do not chain
    }
  };
  const unary = (): WNode => {
    const t = cur();
    if (t.t === 'op' && (t.v === '!' || t.v === '-')) {
      if (++depth > 100) fail(text, 'limit', 'condition is nested more than 100 levels deep', t.s);
      pos++;
      const a = unary();
      depth--;
      return { k: t.v === '!' ? 'not' : 'neg', a, s: t.s, e: t.e };
    }
    if (t.t === 'op' && t.v === '(') {
      if (++depth > 100) fail(text, 'limit', 'condition is nested more than 100 levels deep', t.s);
      pos++;
      const items = [level(0)];
      while (isOp(',')) {
        pos++;
        items.push(level(0));
      }
      const close = cur();
      if (!isOp(')')) fail(text, 'syntax', `expected ")" to close the "(" at ${pretty(text, t.s)}`, close.s, close.e);
      pos++;
      depth--;
      return items.length === 1 ? items[0] : { k: 'list', items, s: t.s, e: close.e };
    }
    if (t.t === 'word') {
      pos++;
      return { k: 'word', parts: t.parts, quoted: t.quoted, s: t.s, e: t.e };
    }
    return fail(
      text,
      'syntax',
      t.t === 'eof' ? 'unexpected end of condition' : `unexpected ${JSON.stringify((t as { v: string }).v)}`,
      t.s,
      t.e,
    );
  };
  const root = level(0);
  const rest = cur();
  if (rest.t !== 'eof')
    fail(
      text,
      'syntax',
      `unexpected ${rest.t === 'op' ? JSON.stringify(rest.v) : 'operand'} (a tag or word may need quotes)`,
      rest.s,
      rest.e,
    );
  return root;
}

function pretty(text: string, offset: number): string {
  const { line, column } = lineColumn(text, offset);
  return `${line}:${column}`;
}

export function compileWhen(text: string): CompiledWhen {
  if (typeof text !== 'string')
    throw new ExprError({ code: 'syntax', what: WHAT, reason: `a when condition must be a string, got ${typeof text}` });
  if (text.length > DEFAULT_LIMITS.maxSourceLength)
    fail(text, 'limit', `condition is longer than ${DEFAULT_LIMITS.maxSourceLength} characters`, 0);
  const root = parseWhen(text, lex(text));
  return { text, evaluate: (vars) => evaluateTree(text, root, vars) };
}

const cache = new Map<string, CompiledWhen>();

/**
 * Evaluates a `when` condition (with its `{{…}}` tags) against a flat variables map. Parsed
 * conditions are cached (bounded), since the engine evaluates the same ones on every pass.
 */
export function evaluateWhen(text: string, vars: FlatVars): boolean {
  let compiled = cache.get(text);
  if (!compiled) {
    compiled = compileWhen(text);
    if (cache.size >= 512) cache.delete(cache.keys().next().value as string);
    cache.set(text, compiled);
  }
  return compiled.evaluate(vars);
}

function evaluateTree(text: string, root: WNode, vars: FlatVars): boolean {
  const resolved = new Map<TagRef, string>();
  const unresolved: string[] = [];
  let firstUnresolved: TagRef | null = null;
  let env: Record<string, Value> | null = null;
  const visit = (n: WNode): void => {
    if (n.k === 'word') {
      for (const p of n.parts) if (typeof p !== 'string') resolveTag(p);
    } else if (n.k === 'list') n.items.forEach(visit);
    else if (n.k === 'bin') {
      visit(n.l);
      visit(n.r);
    } else visit(n.a);
  };
  const resolveTag = (ref: TagRef): void => {
    const where = pretty(text, ref.start);
    const before = unresolved.length;
    try {
      resolveInner(ref, where);
    } finally {
      if (unresolved.length > before && !firstUnresolved) firstUnresolved = ref;
    }
  };
  const resolveInner = (ref: TagRef, where: string): void => {
    if (ref.tag.kind === 'simple') {
      const v = Object.hasOwn(vars, ref.tag.name) ? vars[ref.tag.name] : undefined;
      if (v === undefined || v === null) unresolved.push(`${ref.raw} (${where}) ${v === null ? 'has no value' : 'is not defined'}`);
      else resolved.set(ref, typeof v === 'string' ? v : toJson(v as Value, standaloneMeter(WHAT)));
      return;
    }
    env ??= expandVars(vars);
    try {
      const v = ref.tag.expr.evaluateRaw(env);
      if (v === null || v === undefined) unresolved.push(`${ref.raw} (${where}) evaluated to nil`);
      else resolved.set(ref, typeof v === 'string' ? v : toJson(v, standaloneMeter(WHAT)));
    } catch (err) {
      if (err instanceof ExprError && (err.code === 'unknown-name' || err.code === 'nil-member'))
        unresolved.push(`${ref.raw} (${where}) ${err.reason}`);
      else throw err instanceof ExprError ? err.rebase(text, ref.tag.exprStart, WHAT) : err;
    }
  };
  visit(root);
  if (unresolved.length > 0) {
    const at = firstUnresolved as TagRef | null;
    fail(text, 'unresolved', `cannot resolve ${unresolved.join('; ')}`, at?.start ?? 0, (at?.start ?? 0) + (at?.raw.length ?? 1));
  }

  const word = (n: Extract<WNode, { k: 'word' }>): WValue => {
    const s = n.parts.map((p) => (typeof p === 'string' ? p : (resolved.get(p) as string))).join('');
    if (n.quoted) return { v: s, text: s };
    if (NUMBER.test(s)) return { v: Number(s), text: s };
    if (s === 'true' || s === 'false') return { v: s === 'true', text: s };
    return { v: s, text: s };
  };
  const scalar = (n: WNode, x: WValue): string | number | boolean =>
    'list' in x ? fail(text, 'type', 'a list (a, b) is only allowed after "in"', n.s, n.e) : x.v;
  const kind = (v: string | number | boolean): string => (typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : 'string');
  const bool = (n: WNode, x: WValue, op: string): boolean => {
    const v = scalar(n, x);
    return typeof v === 'boolean'
      ? v
      : fail(text, 'type', `the operands of ${op} must be true or false, got ${kind(v)} ${JSON.stringify(v)}`, n.s, n.e);
  };
  const ev = (n: WNode): WValue => {
    switch (n.k) {
      case 'word':
        return word(n);
      case 'list':
        return { list: n.items.map(ev) };
      case 'not':
        return { v: !bool(n.a, ev(n.a), '!'), text: '' };
      case 'neg': {
        const v = scalar(n.a, ev(n.a));
        return typeof v === 'number'
          ? { v: -v, text: formatGoFloat(-v) }
          : fail(text, 'type', `cannot negate ${kind(v)} ${JSON.stringify(v)}`, n.s, n.e);
      }
      case 'bin':
        return binary(n);
    }
  };
  const binary = (n: Extract<WNode, { k: 'bin' }>): WValue => {
    const { op } = n;
    if (op === '&&' || op === '||') {
      const a = bool(n.l, ev(n.l), op);
      if (op === '&&' ? !a : a) return { v: a, text: '' };
      return { v: bool(n.r, ev(n.r), op), text: '' };
    }
    const lx = ev(n.l);
    const rx = ev(n.r);
    if (op === 'in') {
      const needle = scalar(n.l, lx);
      const items = 'list' in rx ? rx.list : [rx];
      return { v: items.some((x) => !('list' in x) && x.v === needle), text: '' };
    }
    const a = scalar(n.l, lx);
    const b = scalar(n.r, rx);
    switch (op) {
      case '==':
        return { v: a === b, text: '' };
      case '!=':
        return { v: a !== b, text: '' };
      case '=~':
      case '!~': {
        const pattern = String(b);
        let re: Regex;
        try {
          re = Regex.compile(pattern, DEFAULT_LIMITS.maxRegexProgram);
        } catch (err) {
          if (err instanceof RegexSyntaxError)
            fail(text, 'regex', `invalid regular expression ${JSON.stringify(pattern)}: ${err.message}`, n.r.s, n.r.e);
          throw err;
        }
        const hit = re.test((lx as { text: string }).text, standaloneMeter(WHAT));
        return { v: op === '=~' ? hit : !hit, text: '' };
      }
      default:
        break;
    }
    if (typeof a === 'number' && typeof b === 'number') {
      const r = { '<': a < b, '<=': a <= b, '>': a > b, '>=': a >= b, '+': a + b, '-': a - b, '*': a * b, '/': a / b, '%': a % b }[op];
      return { v: r as number | boolean, text: String(r) };
    }
    if (typeof a === 'string' && typeof b === 'string' && ['<', '<=', '>', '>=', '+'].includes(op)) {
      const r = { '<': a < b, '<=': a <= b, '>': a > b, '>=': a >= b, '+': a + b }[op] as string | boolean;
      return { v: r, text: String(r) };
    }
    return fail(text, 'type', `cannot apply ${op} to ${kind(a)} ${JSON.stringify(a)} and ${kind(b)} ${JSON.stringify(b)}`, n.s, n.e);
  };

  const result = ev(root);
  if (!('list' in result) && typeof result.v === 'boolean') return result.v;
  const shown = 'list' in result ? 'a list' : `${kind(result.v)} ${JSON.stringify(result.v)}`;
  throw new ExprError({
    code: 'result',
    what: WHAT,
    reason: `when must evaluate to a boolean, got ${shown}`,
    reasonNamesUse: true,
    source: text,
    offset: root.s,
    length: Math.max(1, root.e - root.s),
  });
}
