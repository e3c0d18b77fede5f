import type { EvalContext } from './context.js';
import { parseFilter, testFilter, type Filter } from './jsonpath-filter.js';
import { isMap, typeName, type Value } from './values.js';

/**
 * `jsonpath(json, path)`, the peer's helper for picking a value out of a JSON parameter.
 * Supported: `$`, `.name`, `['name']`, `[n]` (negative from the end), `[*]` / `.*`, `[a:b]`,
 * unions `[0,2]` / `['a','b']` and recursive descent `..name`. A definite path (no wildcard,
 * slice, union or descent) returns the value itself and fails on a missing key; any other path
 * returns the list of matches. Filters `[?(...)]` keep the elements of a list (or values of a
 * map) for which the filter holds (jsonpath-filter.ts), e.g. `$.employees[?(@.name=="x")].age`.
 */

type Segment =
  | { t: 'key'; keys: string[] }
  | { t: 'index'; idx: number[] }
  | { t: 'all' }
  | { t: 'slice'; from: number | null; to: number | null }
  | { t: 'descend'; key: string | null }
  | { t: 'filter'; f: Filter; size: number };

function parsePath(c: EvalContext, path: string): { segs: Segment[]; definite: boolean } {
  const bad = (why: string): never =>
    c.fail('call', `jsonpath: invalid path ${JSON.stringify(path.length > 200 ? path.slice(0, 200) + '…' : path)}: ${why}`);
  c.charge(path.length >> 1); // parsed character by character
  let i = 0;
  if (path[0] === '$') i = 1;
  const segs: Segment[] = [];
  let definite = true;
  const name = /^[A-Za-z0-9_\-$@]+/;
  while (i < path.length) {
    if (path.startsWith('..', i)) {
      i += 2;
      definite = false;
      if (path[i] === '*') {
        i++;
        segs.push({ t: 'descend', key: null });
        continue;
      }
      const m = name.exec(path.slice(i));
      if (!m) bad(`expected a name after ".." at ${i}`);
      segs.push({ t: 'descend', key: m![0] });
      i += m![0].length;
      continue;
    }
    if (path[i] === '.') {
      i++;
      if (path[i] === '*') {
        i++;
        definite = false;
        segs.push({ t: 'all' });
        continue;
      }
      const m = name.exec(path.slice(i));
      if (!m) bad(`expected a name after "." at ${i}`);
      segs.push({ t: 'key', keys: [m![0]] });
      i += m![0].length;
      continue;
    }
    if (path[i] === '[') {
      const close = findClose(path, i);
      if (close < 0) bad(`unclosed "[" at ${i}`);
      const body = path.slice(i + 1, close).trim();
      i = close + 1;
      if (body === '*') {
        definite = false;
        segs.push({ t: 'all' });
      } else if (body.startsWith('?')) {
        definite = false;
        const { filter, size } = parseFilter(body.slice(1), bad);
        segs.push({ t: 'filter', f: filter, size });
      } else if (/^-?\d*\s*:\s*-?\d*$/.test(body)) {
        const [a, b] = body.split(':').map((x) => x.trim());
        definite = false;
        segs.push({ t: 'slice', from: a === '' ? null : Number(a), to: b === '' ? null : Number(b) });
      } else {
        const parts = splitUnion(body);
        if (parts.length > 1) definite = false;
        if (parts.every((p) => /^-?\d+$/.test(p))) segs.push({ t: 'index', idx: parts.map(Number) });
        else if (parts.every((p) => /^(['"]).*\1$/.test(p))) segs.push({ t: 'key', keys: parts.map((p) => p.slice(1, -1)) });
        else bad(`unsupported subscript [${body}]`);
      }
      continue;
    }
    const m = name.exec(path.slice(i));
    if (m && segs.length === 0 && i === 0) {
      segs.push({ t: 'key', keys: [m[0]] });
      i += m[0].length;
      continue;
    }
    bad(`unexpected ${JSON.stringify(path[i])} at ${i}`);
  }
  return { segs, definite };
}

function findClose(path: string, open: number): number {
  let quote = '';
  let depth = 0;
  for (let i = open + 1; i < path.length; i++) {
    const ch = path[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '[') depth++;
    else if (ch === ']' && depth-- === 0) return i;
  }
  return -1;
}

function splitUnion(body: string): string[] {
  const out: string[] = [];
  let quote = '';
  let cur = '';
  for (const ch of body) {
    if (quote) {
      if (ch === quote) quote = '';
      cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
    } else if (ch === ',') {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

export function jsonPath(c: EvalContext, doc: Value, path: string): Value {
  const { segs, definite } = parsePath(c, path);
  let nodes: Value[] = [doc];
  for (const seg of segs) {
    const next: Value[] = [];
    for (const n of nodes) step(c, seg, n, next, definite, path, 0, doc);
    c.charge(next.length + 1);
    nodes = next;
  }
  return definite ? (nodes[0] ?? null) : nodes;
}

function step(c: EvalContext, seg: Segment, n: Value, out: Value[], definite: boolean, path: string, depth: number, doc: Value): void {
  const missing = (what: string): void => {
    if (definite) c.fail('call', `jsonpath ${JSON.stringify(path)}: ${what}`);
  };
  switch (seg.t) {
    case 'key':
      for (const k of seg.keys) {
        if (isMap(n) && Object.hasOwn(n, k)) out.push(n[k] ?? null);
        else missing(isMap(n) ? `key ${JSON.stringify(k)} not found` : `cannot read key ${JSON.stringify(k)} of ${typeName(n)}`);
      }
      return;
    case 'index':
      for (const raw of seg.idx) {
        if (!Array.isArray(n)) {
          missing(`cannot index ${typeName(n)}`);
          continue;
        }
        const i = raw < 0 ? n.length + raw : raw;
        if (i >= 0 && i < n.length) out.push(n[i] ?? null);
        else missing(`index ${raw} out of range (length ${n.length})`);
      }
      return;
    case 'all':
      if (Array.isArray(n)) for (const x of n as Value[]) out.push(x);
      else if (isMap(n)) for (const k of Object.keys(n)) out.push(n[k] ?? null);
      return;
    case 'slice': {
      if (!Array.isArray(n)) return;
      const len = n.length;
      const norm = (x: number | null, dflt: number): number => (x === null ? dflt : x < 0 ? Math.max(0, len + x) : Math.min(x, len));
      for (let i = norm(seg.from, 0); i < norm(seg.to, len); i++) out.push(n[i] ?? null);
      return;
    }
    case 'descend': {
      if (depth >= c.maxValueDepth) c.limit(`value is nested more than ${c.maxValueDepth} levels deep`);
      const children: Value[] = Array.isArray(n) ? (n as Value[]) : isMap(n) ? Object.keys(n).map((k) => n[k] ?? null) : [];
      c.charge(4 + children.length);
      if (seg.key === null) for (const x of children) out.push(x);
      else if (isMap(n) && Object.hasOwn(n, seg.key)) out.push(n[seg.key] ?? null);
      for (const child of children) step(c, seg, child, out, definite, path, depth + 1, doc);
      return;
    }
    case 'filter': {
      const children: Value[] = Array.isArray(n) ? (n as Value[]) : isMap(n) ? Object.keys(n).map((k) => n[k] ?? null) : [];
      for (const child of children) {
        c.charge(seg.size);
        if (testFilter(c, seg.f, child, doc)) out.push(child);
      }
      return;
    }
  }
}
