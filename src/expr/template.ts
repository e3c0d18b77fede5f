import { compile, type CompiledExpression } from './compile.js';
import { standaloneMeter } from './contracts.js';
import { ExprError, lineColumn } from './errors.js';
import { toJson } from './format.js';
import { findExpressionEnd } from './tag-end.js';
import { expandVars, type FlatVars } from './vars.js';
import type { Value } from './values.js';

/**
 * `{{name}}` and `{{=expression}}` tags. A simple tag is replaced by the variable of that name
 * from a flat map; an expression tag is evaluated with the variables as nested maps. Strings are
 * inserted as they are, other values as compact JSON. A name that cannot be resolved is never
 * replaced by "" silently: either the render fails listing every unresolved tag, or — with
 * `leaveUnresolved`, for the engine's staged substitution — the tag is kept verbatim for a
 * later pass. Expression tags end at the first `}}` outside quotes and brackets (tag-end.ts, shared
 * with the `when` dialect), so `}}` inside a string or a nested map literal does not end the tag.
 */

export interface TemplateOptions {
  /** Keep tags whose variables are not (yet) available instead of failing. */
  leaveUnresolved?: boolean;
}

interface SimpleTag {
  kind: 'simple';
  name: string;
  raw: string;
  start: number;
}

interface ExprTag {
  kind: 'expr';
  expr: CompiledExpression;
  raw: string;
  start: number;
  exprStart: number;
}

type Part = string | SimpleTag | ExprTag;

export class CompiledTemplate {
  /** @internal */
  constructor(
    readonly text: string,
    readonly what: string,
    private readonly parts: Part[],
  ) {}

  /** Each tag's offset in the text and its raw text (`{{…}}`), in order: for structured rendering. */
  get tagSpans(): { start: number; raw: string }[] {
    return this.parts.flatMap((p) => (typeof p === 'string' ? [] : [{ start: p.start, raw: p.raw }]));
  }

  /** Whether the text has any tag at all (most strings of a workflow have none). */
  get hasTags(): boolean {
    return this.parts.some((p) => typeof p !== 'string');
  }

  render(vars: FlatVars, options: TemplateOptions = {}): string {
    let env: Record<string, Value> | null = null;
    const out: string[] = [];
    const unresolved: { tag: SimpleTag | ExprTag; why: string }[] = [];
    for (const part of this.parts) {
      if (typeof part === 'string') {
        out.push(part);
        continue;
      }
      if (part.kind === 'simple') {
        const v = Object.hasOwn(vars, part.name) ? vars[part.name] : undefined;
        if (v === undefined || v === null) {
          if (options.leaveUnresolved) out.push(part.raw);
          else unresolved.push({ tag: part, why: v === null ? 'has no value' : 'is not defined' });
          continue;
        }
        out.push(typeof v === 'string' ? v : toJson(v as Value, standaloneMeter(this.what)));
        continue;
      }
      env ??= expandVars(vars);
      let result: Value;
      try {
        result = part.expr.evaluateRaw(env);
      } catch (err) {
        if (err instanceof ExprError && (err.code === 'unknown-name' || err.code === 'nil-member')) {
          if (options.leaveUnresolved) out.push(part.raw);
          else unresolved.push({ tag: part, why: err.reason });
          continue;
        }
        throw err instanceof ExprError ? err.rebase(this.text, part.exprStart, this.what) : err;
      }
      if (result === null || result === undefined) {
        if (options.leaveUnresolved) {
          out.push(part.raw);
          continue;
        }
        throw new ExprError({
          code: 'result',
          what: this.what,
          reason: `${part.raw} evaluated to nil (a variable it uses has no value)`,
          source: this.text,
          offset: part.start,
          length: part.raw.length,
        });
      }
      out.push(typeof result === 'string' ? result : toJson(result, standaloneMeter(this.what)));
    }
    if (unresolved.length > 0) throw unresolvedError(this.text, this.what, unresolved);
    return out.join('');
  }
}

function unresolvedError(text: string, what: string, list: { tag: SimpleTag | ExprTag; why: string }[]): ExprError {
  const first = list[0].tag;
  const items = list.map(({ tag, why }) => {
    const { line, column } = lineColumn(text, tag.start);
    return `${tag.raw} (${line}:${column}) ${why}`;
  });
  return new ExprError({
    code: 'unresolved',
    what,
    reason: `cannot resolve ${list.length === 1 ? 'tag' : `${list.length} tags`}: ${items.join('; ')}`,
    source: text,
    offset: first.start,
    length: first.raw.length,
  });
}

export function compileTemplate(text: string, what = 'template'): CompiledTemplate {
  if (typeof text !== 'string') throw new ExprError({ code: 'syntax', what, reason: `a template must be a string, got ${typeof text}` });
  const parts: Part[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open < 0) break;
    if (open > i) parts.push(text.slice(i, open));
    let j = open + 2;
    while (j < text.length && /\s/.test(text[j])) j++;
    if (text[j] === '=') {
      const exprStart = j + 1;
      const close = findExpressionEnd(text, exprStart);
      if (close < 0) throw tagError(text, what, open, 'unclosed {{= tag (no matching }})');
      const source = text.slice(exprStart, close);
      let expr: CompiledExpression;
      try {
        expr = compile(source, { what });
      } catch (err) {
        throw err instanceof ExprError ? err.rebase(text, exprStart, what) : err;
      }
      parts.push({ kind: 'expr', expr, raw: text.slice(open, close + 2), start: open, exprStart });
      i = close + 2;
      continue;
    }
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw tagError(text, what, open, 'unclosed {{ tag (no matching }})');
    const name = text.slice(open + 2, close).trim();
    if (name === '') throw tagError(text, what, open, 'empty {{}} tag');
    parts.push({ kind: 'simple', name, raw: text.slice(open, close + 2), start: open });
    i = close + 2;
  }
  if (i < text.length) parts.push(text.slice(i));
  return new CompiledTemplate(text, what, parts);
}

function tagError(text: string, what: string, offset: number, reason: string): ExprError {
  return new ExprError({ code: 'syntax', what, reason, source: text, offset, length: 2 });
}

const cache = new Map<string, CompiledTemplate>();
const CACHE_SIZE = 512;

/**
 * Renders `text` with `vars`. Compiled templates are cached (bounded, least recently used
 * dropped first), so the engine can call this on every reconcile without re-parsing.
 */
export function renderTemplate(text: string, vars: FlatVars, options: TemplateOptions = {}, what = 'template'): string {
  if (!text.includes('{{')) return text;
  const key = `${what}\u0000${text}`;
  let tpl = cache.get(key);
  if (tpl) {
    cache.delete(key);
  } else {
    tpl = compileTemplate(text, what);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(key, tpl);
  return tpl.render(vars, options);
}
