import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { compileBoolean } from './contracts.js';
import { compileDepends } from './depends.js';
import { ExprError } from './errors.js';
import { renderTemplate } from './template.js';
import { evaluateWhen } from './when.js';

/**
 * Property tests for safety: whatever the expression and whatever the payload, only ExprError
 * comes out (never a TypeError, RangeError or other crash), nothing runs away (the step, depth
 * and size limits stop it), and nothing ever reaches Object.prototype. Random inputs come from
 * a seeded generator so a failure can be replayed.
 */

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'length',
  'x-name',
  '',
];
const NAMES = ['payload', 'metadata', 'discriminator', 'namespace', '$env', '__proto__', 'constructor', 'toString', 'nope'];
const OPS = [
  '&&',
  '||',
  '==',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '**',
  '^',
  '??',
  'in',
  'not in',
  'matches',
  'contains',
  'startsWith',
  'endsWith',
  '..',
  'and',
  'or',
  '|',
];
const FUNCS = [
  'len',
  'string',
  'int',
  'float',
  'lower',
  'upper',
  'trim',
  'split',
  'join',
  'toJson',
  'toJSON',
  'fromJSON',
  'fromJson',
  'asInt',
  'asFloat',
  'jsonpath',
  'keys',
  'values',
  'sort',
  'uniq',
  'flatten',
  'concat',
  'repeat',
  'replace',
  'type',
  'first',
  'last',
  'get',
  'max',
  'min',
  'sum',
];
const PREDICATES = ['all', 'any', 'none', 'one', 'filter', 'map', 'count', 'find', 'findIndex', 'groupBy', 'sortBy', 'reduce'];
const SPRIG = [
  'toString',
  'int',
  'trim',
  'dict',
  'set',
  'dig',
  'regexMatch',
  'regexReplaceAll',
  'repeat',
  'join',
  'splitList',
  'toJson',
  'fromJson',
  'default',
  'b64dec',
];
const REGEX_CHARS = 'a()*+?{}[]|\\^$.,0123456789-:wdsbpPQEiU<>=!';

function genExpr(r: () => number, depth: number): string {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const leaf = (): string => {
    switch (Math.floor(r() * 9)) {
      case 0:
        return pick(NAMES);
      case 1:
        return String(Math.floor(r() * 2000) - 1000) + (r() < 0.3 ? '.5' : '');
      case 2:
        return JSON.stringify(pick(HOSTILE_KEYS));
      case 3:
        return pick(['nil', 'true', 'false', '#', '#index', '#acc', '.x']);
      case 4:
        return `payload.${pick(['message', 'list', 'deep', 'nums', 'map'])}`;
      case 5:
        return JSON.stringify(
          Array.from({ length: Math.floor(r() * 8) }, () => REGEX_CHARS[Math.floor(r() * REGEX_CHARS.length)]).join(''),
        );
      default:
        return `${pick(NAMES)}[${JSON.stringify(pick(HOSTILE_KEYS))}]`;
    }
  };
  if (depth <= 0) return leaf();
  const sub = (): string => genExpr(r, depth - 1);
  switch (Math.floor(r() * 10)) {
    case 0:
      return `${sub()} ${pick(OPS)} ${sub()}`;
    case 1:
      return `${pick(['!', '-', 'not '])}${sub()}`;
    case 2:
      return `${pick(FUNCS)}(${Array.from({ length: Math.floor(r() * 3) + 1 }, sub).join(', ')})`;
    case 3:
      return `${pick(PREDICATES)}(${sub()}, {${sub()}}${r() < 0.3 ? `, ${sub()}` : ''})`;
    case 4:
      return `sprig.${pick(SPRIG)}(${Array.from({ length: Math.floor(r() * 4) }, sub).join(', ')})`;
    case 5:
      return `${sub()}${pick(['.', '?.'])}${pick(['x', 'message', 'constructor', '__proto__', 'prototype', 'length'])}`;
    case 6:
      return `${sub()}[${sub()}]`;
    case 7:
      return `${sub()} ? ${sub()} : ${sub()}`;
    case 8:
      return `[${sub()}, ${sub()}]`;
    default:
      return `{${JSON.stringify(pick(HOSTILE_KEYS))}: ${sub()}, (${sub()}): ${sub()}}`;
  }
}

function mutate(r: () => number, s: string, corpus: string[]): string {
  let out = s;
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (out.length + 1));
    switch (Math.floor(r() * 5)) {
      case 0:
        out = out.slice(0, at) + out.slice(at + 1 + Math.floor(r() * 3));
        break;
      case 1:
        out = out.slice(0, at) + '(){}[]"\'`.#?:!&|=<>+-*/%^$\\,;@~ \n0aZ_é😀'[Math.floor(r() * 38)] + out.slice(at);
        break;
      case 2: {
        const other = corpus[Math.floor(r() * corpus.length)];
        const from = Math.floor(r() * other.length);
        out = out.slice(0, at) + other.slice(from, from + 1 + Math.floor(r() * 12)) + out.slice(at);
        break;
      }
      case 3:
        out = out.slice(0, at) + out.slice(at).replace(/\d+/, String(Math.floor(r() * 1e6)));
        break;
      default:
        out = out.slice(at) + out.slice(0, at);
    }
  }
  return out;
}

function genValue(r: () => number, depth: number): unknown {
  const roll = Math.floor(r() * 10);
  if (depth <= 0 || roll < 4) {
    return [null, true, false, 0, -1.5, 3, 1e308, '', 'hello', 'aaaaaaaaaaaaaaaaaaaaaaaa!', '{"a":1}', '1', '__proto__'][
      Math.floor(r() * 13)
    ];
  }
  if (roll < 7) return Array.from({ length: Math.floor(r() * 5) }, () => genValue(r, depth - 1));
  const obj: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 5); i > 0; i--) {
    Object.defineProperty(obj, HOSTILE_KEYS[Math.floor(r() * HOSTILE_KEYS.length)], {
      value: genValue(r, depth - 1),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return obj;
}

/** A value nested `depth` levels deep, built without recursion. */
function deepValue(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

function payloadEnv(r: () => number): Record<string, unknown> {
  const payload = JSON.parse(
    JSON.stringify({
      message: 'hello',
      list: ['one', 'two'],
      nums: [1, 2.5, 3],
      map: { a: 1 },
      deep: genValue(r, 4),
      extra: genValue(r, 3),
    }),
  ) as Record<string, unknown>;
  if (r() < 0.2) payload.deep = deepValue(5000);
  if (r() < 0.2) payload.message = 'a'.repeat(20_000) + '!';
  // JSON.parse keeps "__proto__" as an own key: exactly what a hostile event body produces.
  const hostile = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}') as Record<
    string,
    unknown
  >;
  return {
    payload: { ...payload, ...(r() < 0.5 ? { evil: hostile } : {}) },
    metadata: { 'x-name': ['value'] },
    discriminator: 'd',
    namespace: 'ns',
    ...(r() < 0.3 ? hostile : {}),
  };
}

const LIMITS = { maxSteps: 200_000 };
const protoKeys = (): string[] =>
  [
    ...Object.getOwnPropertyNames(Object.prototype),
    ...Object.getOwnPropertyNames(Array.prototype),
    ...Object.getOwnPropertyNames(Function.prototype),
  ].sort();

function expectPrototypesClean(before: string[]): void {
  expect(protoKeys()).toEqual(before);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  expect(typeof Object.prototype.toString).toBe('function');
}

/** Runs `fn`; the only acceptable failure is an ExprError. Returns how long it took. */
function onlyExprErrors(label: string, fn: () => unknown): number {
  const t0 = performance.now();
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ExprError)) {
      throw new Error(`${label} threw ${err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err)}`);
    }
    expect(err.message.length).toBeGreaterThan(0);
  }
  return performance.now() - t0;
}

const CASES = fileURLToPath(new URL('./testdata/expr-cases.jsonl', import.meta.url));
const SEEDS = [
  'payload.message != nil && metadata["x-name"] == ["value"]',
  'filter(payload.list, {# endsWith "o"})',
  'reduce(payload.nums, #acc + #, 0)',
  'payload?.deep?.a ?? "x"',
  'let x = payload.map; x.a in [1, 2] ? "y" : "n"',
  'sprig.dig("a", nil, payload.map) | string()',
  'payload.message matches "^(a+)+$"',
  '{{=payload.message}} =~ hel',
  'A && (B.Failed || !c-d.AnySucceeded)',
  ...(existsSync(CASES)
    ? readFileSync(CASES, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { expr: string }).expr)
    : []),
];

describe('fuzz: random and mutated expressions against random payloads', () => {
  it('produce values or ExprErrors only, in bounded time, without touching prototypes', () => {
    const before = protoKeys();
    const r = rng(20240501);
    let slowest = 0;
    for (let i = 0; i < 2500; i++) {
      const expr = i % 3 === 0 ? genExpr(r, 1 + Math.floor(r() * 4)) : mutate(r, SEEDS[Math.floor(r() * SEEDS.length)], SEEDS);
      const env = payloadEnv(r);
      const label = `#${i} ${JSON.stringify(expr)}`;
      slowest = Math.max(
        slowest,
        onlyExprErrors(label, () => compile(expr, { limits: LIMITS }).evaluate(env)),
        onlyExprErrors(`${label} as selector`, () => compileBoolean(expr, 'selector', { limits: LIMITS }).evaluate(env)),
        onlyExprErrors(`${label} as template`, () =>
          renderTemplate(`x {{=${expr}}} {{${expr}}}`, { 'payload.message': 'm', item: 'i' }, { leaveUnresolved: r() < 0.5 }),
        ),
        onlyExprErrors(`${label} as when`, () => evaluateWhen(expr, { 'payload.message': 'hello' })),
        onlyExprErrors(`${label} as depends`, () => compileDepends(expr).evaluate({ A: { phase: 'Succeeded' }, B: { phase: 'Failed' } })),
      );
    }
    expectPrototypesClean(before);
    // A hang detector, not a benchmark: every single evaluation is bounded by the step budget.
    expect(slowest).toBeLessThan(10_000);
  }, 240_000);
});

describe('hostile inputs', () => {
  const env = {
    payload: JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"name": "evil"}, "message": "' + 'a'.repeat(100_000) + '!"}',
    ) as unknown,
    deep: deepValue(20_000),
  };

  it.each([
    ['string doubling in reduce', 'reduce(1..100000, #acc + #acc, "x")', 'limit'],
    ['nested maps over ranges', 'map(1..2000, {map(1..2000, # * 2)})', 'limit'],
    ['a huge range', '1..100000000000', 'limit'],
    ['repeat to gigabytes', 'repeat("x", 1000000000)', 'limit'],
    ['sprig repeat', 'sprig.repeat(1000000000, "x")', 'limit'],
    ['equality of a very deep payload', 'deep == deep', null],
    ['equality of two deep copies', 'deep == fromJSON(toJson(deep))', 'limit'],
    ['JSON of a very deep payload', 'toJson(deep)', 'limit'],
    ['formatting a very deep payload', 'string(deep)', 'limit'],
    ['flatten of a deep payload', 'flatten([deep])', null],
    ['backtracking regex on a long payload', 'payload.message matches "^(a+)+$"', null],
    ['backtracking regex built at run time', 'payload.message matches ("^(a|" + "aa)+$")', null],
  ])('%s: stops with a limit error or finishes', (_name, src, code) => {
    let result: unknown;
    try {
      result = compile(src).evaluate(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ExprError);
      expect((err as ExprError).code).toBe(code ?? (err as ExprError).code);
      if (code === null) throw err;
      return;
    }
    expect(code).toBeNull();
    expect(result).not.toBeUndefined();
  });

  it('prototype names are just missing keys or plain data', () => {
    const before = protoKeys();
    const ev = (src: string, e: Record<string, unknown> = env): unknown => compile(src).evaluate(e);
    expect(ev('payload.__proto__.polluted')).toBe('yes');
    expect(ev('payload.constructor.name')).toBe('evil');
    expect(
      ev('payload.toString == nil && payload.hasOwnProperty == nil && payload.message.length == nil', { payload: { message: {} } }),
    ).toBe(true);
    expect(ev('{}.constructor == nil', {})).toBe(true);
    expect(() => ev('[].length', {})).toThrow(/cannot read "length" of an array/);
    expect(() => ev('constructor', {})).toThrow(/unknown name constructor/);
    expect(() => ev('toString', {})).toThrow(/unknown name toString/);
    expect(ev('$env.__proto__ == nil', {})).toBe(true);
    const made = ev('{"__proto__": {"polluted": "yes"}}', {}) as Record<string, unknown>;
    expect(Object.getPrototypeOf(made)).toBeNull();
    expect(Object.keys(made)).toEqual(['__proto__']);
    ev('fromJSON(`{"__proto__": {"polluted": "yes"}}`).__proto__.polluted', {});
    ev('sprig.set(payload, "__proto__", {"polluted": "yes"})');
    ev('sprig.dict("__proto__", {"polluted": "yes"})', {});
    ev('fromPairs([["__proto__", {"polluted": "yes"}]])', {});
    ev('groupBy(["__proto__", "constructor"], #)', {});
    renderTemplate('{{=__proto__.polluted}}', { '__proto__.polluted': 'yes', 'constructor.prototype.polluted': 'yes' });
    expectPrototypesClean(before);
  });

  it('cyclic host data cannot hang or crash an evaluation', () => {
    const cyclic: Record<string, unknown> = { name: 'c' };
    cyclic.self = cyclic;
    for (const src of ['cyclic == cyclic', 'toJson(cyclic)', 'string(cyclic)', 'flatten([cyclic])', 'cyclic.self.self.self.name']) {
      onlyExprErrors(src, () => compile(src).evaluate({ cyclic }));
    }
    expect(() => compile('toJson(cyclic)').evaluate({ cyclic })).toThrow(/nested more than 100 levels/);
  });
});
