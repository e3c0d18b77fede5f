/**
 * `valueFrom.jsonPath` of resource template outputs: kubectl's JSONPath template language
 * (`{.metadata.name}`, `{.status.conditions[?(@.type=="Ready")].status}`,
 * `{range .items[*]}{.metadata.name}{"\n"}{end}`), evaluated as `kubectl get -o jsonpath=…` prints
 * it: text outside braces is copied, several results are joined by a space, strings are printed
 * as they are and other values as JSON, and a missing field prints nothing (kubectl's
 * `allowMissingKeys`, which `get -o jsonpath` turns on).
 *
 * Supported inside braces: `.field`, `['field']`, `[n]` (negative from the end), `[a:b]`, `[*]`,
 * `.*`, `..field` (recursive), filters `[?(@.path)]` and `[?(@.path <op> literal)]` with
 * ==, !=, <, <=, >, >=, `range … end`, and quoted literals. Anything else is refused when parsed,
 * naming the field, never guessed.
 */
import { FieldError } from '../api/index.js';

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'recursive'; /** A field name, or '*' for every value. */ name: string }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number }
  | { kind: 'filter'; path: Step[]; op?: FilterOp; literal?: string | number | boolean | null };

type FilterOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

type Node = { kind: 'text'; text: string } | { kind: 'path'; steps: Step[] } | { kind: 'range'; steps: Step[]; body: Node[] };

/** A parsed template; `evaluate` prints it for an object. */
export interface JsonPathTemplate {
  evaluate(object: unknown): string;
}

export function parseJsonPath(template: string, field: string): JsonPathTemplate {
  const nodes = parseNodes(template, field);
  return { evaluate: (object) => printNodes(nodes, object) };
}

function parseNodes(template: string, field: string): Node[] {
  const bad = (why: string): never => {
    throw new FieldError(field, `${JSON.stringify(template)}: ${why}`);
  };
  const root: Node[] = [];
  const stack: { body: Node[] }[] = [{ body: root }];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      stack.at(-1)!.body.push({ kind: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) stack.at(-1)!.body.push({ kind: 'text', text: template.slice(i, open) });
    const close = closingBrace(template, open);
    if (close < 0) bad('a "{" is not closed');
    const inner = template.slice(open + 1, close).trim();
    i = close + 1;
    if (inner === 'end') {
      if (stack.length === 1) bad('"{end}" without "{range …}"');
      stack.pop();
      continue;
    }
    if (inner.startsWith('range ')) {
      const node: Node = { kind: 'range', steps: parsePath(inner.slice(6).trim(), bad), body: [] };
      stack.at(-1)!.body.push(node);
      stack.push(node);
      continue;
    }
    const literal = /^"((?:[^"\\]|\\.)*)"$/.exec(inner) ?? /^'([^']*)'$/.exec(inner);
    if (literal) {
      stack.at(-1)!.body.push({ kind: 'text', text: unescape(literal[1]!) });
      continue;
    }
    stack.at(-1)!.body.push({ kind: 'path', steps: parsePath(inner, bad) });
  }
  if (stack.length > 1) bad('"{range …}" without "{end}"');
  return root;
}

/** The index of the `}` that closes the `{` at `open`, skipping quoted text; -1 when none. */
function closingBrace(s: string, open: number): number {
  let quote: string | undefined;
  for (let i = open + 1; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '}') return i;
  }
  return -1;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : c));
}

function parsePath(text: string, bad: (why: string) => never): Step[] {
  let s = text;
  if (s.startsWith('$')) s = s.slice(1);
  else if (s.startsWith('@')) s = s.slice(1);
  const steps: Step[] = [];
  let i = 0;
  const name = (): string => {
    const m = /^[^.[\]\s()]+/.exec(s.slice(i));
    if (!m) bad(`expected a field name at ${JSON.stringify(s.slice(i))}`);
    i += m![0].length;
    return m![0];
  };
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      i += 2;
      if (s[i] === '*') {
        i++;
        steps.push({ kind: 'recursive', name: '*' });
      } else steps.push({ kind: 'recursive', name: name() });
    } else if (s[i] === '.') {
      i++;
      if (i >= s.length) break; // `{.}`: the object itself
      if (s[i] === '*') {
        i++;
        steps.push({ kind: 'wildcard' });
      } else steps.push({ kind: 'field', name: name() });
    } else if (s[i] === '[') {
      const close = matchingBracket(s, i);
      if (close < 0) bad('a "[" is not closed');
      steps.push(parseBracket(s.slice(i + 1, close).trim(), bad));
      i = close + 1;
    } else if (i === 0) {
      steps.push({ kind: 'field', name: name() });
    } else {
      bad(`unexpected ${JSON.stringify(s.slice(i))} (the supported forms are .field, ['field'], [n], [a:b], [*], ..field, [?(…)])`);
    }
  }
  return steps;
}

function matchingBracket(s: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  return -1;
}

function parseBracket(inner: string, bad: (why: string) => never): Step {
  if (inner === '*') return { kind: 'wildcard' };
  const quoted = /^'([^']*)'$/.exec(inner) ?? /^"([^"]*)"$/.exec(inner);
  if (quoted) return { kind: 'field', name: quoted[1]! };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const slice = /^(-?\d+)?\s*:\s*(-?\d+)?$/.exec(inner);
  if (slice) {
    return {
      kind: 'slice',
      ...(slice[1] !== undefined ? { start: Number(slice[1]) } : {}),
      ...(slice[2] !== undefined ? { end: Number(slice[2]) } : {}),
    };
  }
  const filter = /^\?\((.*)\)$/.exec(inner);
  if (filter) {
    const cond = filter[1]!.trim();
    const m = /^(@[^\s=!<>]*)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(cond);
    if (!m) {
      if (!cond.startsWith('@')) bad(`a filter must start with "@": ${JSON.stringify(cond)}`);
      return { kind: 'filter', path: parsePath(cond, bad) };
    }
    return { kind: 'filter', path: parsePath(m[1]!, bad), op: m[2] as FilterOp, literal: parseLiteral(m[3]!.trim(), bad) };
  }
  return bad(`unsupported subscript [${inner}]`);
}

function parseLiteral(text: string, bad: (why: string) => never): string | number | boolean | null {
  const q = /^"((?:[^"\\]|\\.)*)"$/.exec(text) ?? /^'([^']*)'$/.exec(text);
  if (q) return unescape(q[1]!);
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null') return null;
  return bad(`a filter compares with a quoted string, a number, true, false or null, not ${JSON.stringify(text)}`);
}

function select(steps: readonly Step[], from: unknown[]): unknown[] {
  let cur = from;
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of cur) apply(step, v, next);
    cur = next;
  }
  return cur;
}

function own(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function apply(step: Step, v: unknown, out: unknown[]): void {
  switch (step.kind) {
    case 'field':
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && own(v, step.name))
        out.push((v as Record<string, unknown>)[step.name]);
      return;
    case 'wildcard':
      if (Array.isArray(v)) out.push(...v);
      else if (v !== null && typeof v === 'object') out.push(...Object.values(v));
      return;
    case 'recursive':
      collect(v, step.name, out);
      return;
    case 'index':
      if (Array.isArray(v)) {
        const i = step.index < 0 ? v.length + step.index : step.index;
        if (i >= 0 && i < v.length) out.push(v[i]);
      }
      return;
    case 'slice':
      if (Array.isArray(v)) out.push(...v.slice(step.start, step.end));
      return;
    case 'filter': {
      const items = Array.isArray(v) ? v : [];
      for (const item of items) if (filterHolds(step, item)) out.push(item);
      return;
    }
  }
}

function collect(v: unknown, name: string, out: unknown[]): void {
  if (v === null || typeof v !== 'object') return;
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
  for (const [k, x] of entries) {
    if (!Array.isArray(v) && (name === '*' || k === name)) out.push(x);
    collect(x, name, out);
  }
}

function filterHolds(step: Extract<Step, { kind: 'filter' }>, item: unknown): boolean {
  const found = select(step.path, [item]);
  if (step.op === undefined) return found.length > 0;
  const lit = step.literal;
  return found.some((x) => {
    switch (step.op) {
      case '==':
        return x === lit;
      case '!=':
        return x !== lit;
      default: {
        if (typeof x !== typeof lit || (typeof x !== 'number' && typeof x !== 'string')) return false;
        const a = x as number | string;
        const b = lit as number | string;
        return step.op === '<' ? a < b : step.op === '<=' ? a <= b : step.op === '>' ? a > b : a >= b;
      }
    }
  });
}

function printNodes(nodes: readonly Node[], object: unknown): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'text') out += n.text;
    else if (n.kind === 'path') out += select(n.steps, [object]).map(print).join(' ');
    else for (const item of select(n.steps, [object]).flatMap((x) => (Array.isArray(x) ? x : [x]))) out += printNodes(n.body, item);
  }
  return out;
}

function print(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  return JSON.stringify(v);
}
