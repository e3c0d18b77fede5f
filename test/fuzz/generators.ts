/**
 * Seeded generators of hostile input, shared by the fuzz targets: JSON values of every shape
 * and type, deep nesting, long strings, odd Unicode, bytes that are not UTF-8, numbers JSON
 * cannot hold, keys that are dangerous in JavaScript, and mutations of valid objects (drop a
 * field, change its type, blow up its size). Sizes are bounded: the point is hostile shape,
 * not exhausting the machine.
 */
import type { Prng } from '../soak/prng.js';

const STRINGS = [
  '',
  ' ',
  'x',
  '{{workflow.name}}',
  '{{=sprig.repeat(1000000, "x")}}',
  '{{inputs.parameters.nope}}',
  '${HOME}',
  '$(PATH)',
  '../../etc/passwd',
  '\u0000',
  '\ud800',
  '\uffff',
  'é',
  '😀'.repeat(50),
  '\u202e reversed',
  'a'.repeat(300),
  'UPPER_case.name',
  '-leading-dash',
  '1234',
  'true',
  'null',
  '<script>alert(1)</script>',
  "'; DROP TABLE x; --",
  '%00%2e%2e%2f',
  'payload.x == true',
  '(((((((((',
  'nil.x.y',
];

const KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  'a.b',
  'x'.repeat(300),
  'name',
  'metadata',
  'spec',
  'phase',
  'node',
  '😀',
];

export function hostileString(rng: Prng): string {
  if (rng.chance(0.15)) return rng.pick(['x', 'é', '😀', '\u0000', 'ab']).repeat(rng.int(1_000, 200_000));
  return rng.pick(STRINGS);
}

export function hostileNumber(rng: Prng): number | string {
  // Strings here are JSON number texts JavaScript cannot hold exactly (used by rawJson).
  return rng.pick<number | string>([0, -0, -1, 1.5, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, -1e308, 1e-320, 4294967296, 65536, 99999999999]);
}

/** A random JSON-able value, at most `depth` levels deep. */
export function jsonValue(rng: Prng, depth = 4): unknown {
  const kind = depth <= 0 ? rng.int(0, 3) : rng.int(0, 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return hostileNumber(rng);
    case 3:
      return hostileString(rng);
    case 4:
      return Array.from({ length: rng.int(0, 5) }, () => jsonValue(rng, depth - 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 5); i > 0; i--)
        Object.defineProperty(o, rng.pick(KEYS), {
          value: jsonValue(rng, depth - 1),
          enumerable: true,
          configurable: true,
          writable: true,
        });
      return o;
    }
  }
}

/** `depth` nested arrays or objects as JSON text (built as text: no recursion here). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Bodies that are not valid JSON, or valid JSON in an odd encoding, as bytes. */
export function oddBody(rng: Prng, valid: string): Buffer {
  switch (rng.int(0, 11)) {
    case 0:
      return Buffer.from(valid.slice(0, Math.max(1, Math.floor(valid.length / 2)))); // truncated
    case 1:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid)]); // UTF-8 BOM
    case 2:
      return Buffer.from(`\ufeff${valid}`, 'utf16le'); // UTF-16LE with BOM
    case 3:
      return Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1]); // not UTF-8
    case 4:
      return Buffer.from(`{"a": "${'\\ud800'}", "b": 1e999999}`);
    case 5:
      return Buffer.from('{"a":1,"a":2,"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}');
    case 6:
      return Buffer.from(`${valid}${valid}`); // two documents
    case 7:
      return Buffer.from(valid.replace(/"/g, "'"));
    case 8:
      return Buffer.from('\u0000'.repeat(64));
    case 9:
      return Buffer.from(`${valid}\n// comment`);
    case 10:
      return Buffer.from('NaN');
    default:
      return Buffer.from(JSON.stringify(jsonValue(rng)));
  }
}

type Json = Record<string, unknown>;

/**
 * Mutates a copy of a valid object at 1–3 random paths: delete the field, change its type,
 * swap in a hostile value, or multiply a list.
 */
export function mutate<T>(rng: Prng, valid: T, count = rng.int(1, 3)): { value: unknown; changes: string[] } {
  const value = structuredClone(valid) as unknown;
  const changes: string[] = [];
  for (let i = 0; i < count; i++) {
    const paths = collectPaths(value);
    if (paths.length === 0) break;
    const path = rng.pick(paths);
    const parent = path.slice(0, -1).reduce<unknown>((o, k) => (o as Json)[k as string], value) as Json | unknown[];
    const key = path[path.length - 1]!;
    const where = path.join('.');
    const op = rng.int(0, 4);
    if (op === 0 && !Array.isArray(parent)) {
      delete (parent as Json)[key as string];
      changes.push(`delete ${where}`);
    } else if (op === 1) {
      const v = jsonValue(rng, 2);
      (parent as Json)[key as string] = v;
      changes.push(`${where} = ${short(v)}`);
    } else if (op === 2) {
      const v = rng.pick<unknown>([null, 0, '', [], {}, true, 'x', -1, 1e9]);
      (parent as Json)[key as string] = v;
      changes.push(`${where} = ${short(v)}`);
    } else if (op === 3) {
      const cur = (parent as Json)[key as string];
      if (Array.isArray(cur) && cur.length > 0) {
        const n = rng.int(2, 40);
        (parent as Json)[key as string] = Array.from({ length: n }, () => structuredClone(cur[0]));
        changes.push(`${where} × ${n}`);
      } else {
        (parent as Json)[key as string] = hostileString(rng);
        changes.push(`${where} = hostile string`);
      }
    } else {
      (parent as Json)[key as string] = [(parent as Json)[key as string]];
      changes.push(`${where} wrapped in a list`);
    }
  }
  return { value, changes };
}

function collectPaths(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v && typeof v === 'object') {
    for (const [k, child] of Object.entries(v as Json)) {
      const p = [...prefix, Array.isArray(v) ? Number(k) : k];
      out.push(p);
      if (out.length < 400) collectPaths(child, p, out);
    }
  }
  return out;
}

export function short(v: unknown): string {
  const s =
    typeof v === 'string' ? JSON.stringify(v.length > 30 ? `${v.slice(0, 30)}…(${v.length})` : v) : (JSON.stringify(v) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}
