import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { compileBoolean, compileString, compileValue } from './contracts.js';
import { ExprError } from './errors.js';

const payload = {
  message: 'hello',
  count: 3,
  ratio: 0.5,
  flag: true,
  list: ['one', 'two'],
  nested: { a: { b: 'deep' } },
  commits: [{ added: ['a.txt'] }, { added: [] }],
};
const env = { payload, metadata: { 'x-github-event': ['push'] }, discriminator: 'd', namespace: 'argo' };

const ev = (src: string, e: Record<string, unknown> = env): unknown => compile(src).evaluate(e);

function evError(src: string, e: Record<string, unknown> = env): ExprError {
  try {
    compile(src, { what: 'selector' }).evaluate(e);
  } catch (err) {
    expect(err).toBeInstanceOf(ExprError);
    return err as ExprError;
  }
  throw new Error(`expected ${src} to fail`);
}

describe('nil semantics', () => {
  it('a missing key is nil; a member of nil is an error that names the nil part', () => {
    expect(ev('payload.missing')).toBeNull();
    expect(ev('payload.missing == nil')).toBe(true);
    const err = evError('payload.missing.x == 1');
    expect(err.code).toBe('nil-member');
    expect(err.message).toBe(
      'selector: cannot read "x" of nil: payload.missing is nil (use ?. or check it != nil first) at 1:17\n  payload.missing.x == 1\n                  ^',
    );
    expect(evError('metadata["x-missing"][0]').reason).toMatch(/cannot read 0 of nil: metadata\["x-missing"\] is nil/);
  });

  it('?. short-circuits the whole chain and ?? supplies a default', () => {
    expect(ev('payload.missing?.x.y.z')).toBeNull();
    expect(ev('payload.missing?.[0]')).toBeNull();
    expect(ev('payload.nested?.a.b')).toBe('deep');
    expect(ev('payload.missing?.x ?? "dflt"')).toBe('dflt');
    expect(ev('payload.message ?? "dflt"')).toBe('hello');
    expect(ev('"" ?? "dflt"')).toBe('');
  });

  it('nil operands of matches, contains, startsWith and endsWith give false', () => {
    expect(ev('payload.missing matches "x" || payload.missing contains "x" || nil startsWith "x" || "x" endsWith nil')).toBe(false);
    expect(ev('payload.missing not contains "x"')).toBe(true);
  });

  it('nil elsewhere is a type error', () => {
    expect(evError('payload.missing + "x"').reason).toBe(
      'invalid operation: nil + string (an operand is nil: check for nil first or use ??)',
    );
    expect(evError('payload.missing && true').reason).toBe('the left operand of && must be a bool, got nil (payload.missing)');
    expect(evError('!payload.missing').reason).toMatch(/invalid operation: !nil/);
    expect(evError('len(payload.missing)').reason).toBe('invalid argument for len (type nil)');
    expect(evError('payload.missing < 1').code).toBe('type');
  });

  it('an unknown top-level name is an error listing what is available', () => {
    const err = evError('paylod.message');
    expect(err.code).toBe('unknown-name');
    expect(err.reason).toBe('unknown name paylod (available: discriminator, metadata, namespace, payload)');
    expect(evError('x != null').reason).toMatch(/unknown name x/);
  });
});

describe('operators', () => {
  it('&& and || short-circuit: the right side is not evaluated', () => {
    expect(ev('payload.missing != nil && payload.missing.x == 1')).toBe(false);
    expect(ev('true || payload.missing.x')).toBe(true);
    expect(ev('false && len(nil) > 0')).toBe(false);
    expect(evError('true && "x"').reason).toMatch(/right operand of && must be a bool, got string/);
  });

  it('compares lists and maps element-wise, numbers across int and float', () => {
    expect(ev('payload.list == ["one", "two"]')).toBe(true);
    expect(ev('payload.list == ["two", "one"]')).toBe(false);
    expect(ev('payload.list != ["one"]')).toBe(true);
    expect(ev('{"a": [1, {"b": 2}]} == {"a": [1.0, {"b": 2}]}')).toBe(true);
    expect(ev('{"a": 1} == {"a": 1, "b": 2}')).toBe(false);
    expect(ev('payload.count == 3 && payload.count == 3.0 && 3 == 3.0 && payload.ratio < 1')).toBe(true);
    expect(ev('"2" == 2')).toBe(false);
    expect(ev('nil == nil && nil != false && [] != nil')).toBe(true);
    expect(ev('9007199254740993 == 9007199254740992')).toBe(false);
  });

  it('keeps int and float apart the way expr-lang does', () => {
    expect(
      ev('type(1) + " " + type(1.0) + " " + type(payload.count) + " " + type(4 / 2) + " " + type(2 ** 2) + " " + type(len("x"))'),
    ).toBe('int float float float float int');
    expect(ev('7 / 2')).toBe(3.5);
    expect(ev('7 % 3')).toBe(1);
    expect(evError('7.0 % 2').reason).toBe('invalid operation: float % int');
    expect(evError('1 % 0').reason).toBe('integer divide by zero');
    expect(ev('9223372036854775807 + 1 == -9223372036854775807 - 1')).toBe(true);
    expect(ev('1 / 0 > 1e308')).toBe(true);
  });

  it('orders numbers and strings (by code point), and nothing else', () => {
    expect(ev('"a" < "b" && "B" < "a" && "é" > "z" && "\uFFFF" < "😀"')).toBe(true);
    expect(evError('"2" > 1').reason).toBe('invalid operation: string > int (convert the string with int(...) or float(...))');
    expect(evError('[1] < [2]').code).toBe('type');
  });

  it('in / not in work on lists (by equality) and maps (by key); in nil is false', () => {
    expect(ev('"push" in metadata["x-github-event"]')).toBe(true);
    expect(ev('payload.count in [1, 2, 3]')).toBe(true);
    expect(ev('"message" in payload && "missing" not in payload')).toBe(true);
    expect(ev('"x" in payload.missing')).toBe(false);
    expect(ev('[1, 2] in [[1, 2], [3]]')).toBe(true);
    expect(evError('1 in "abc"').reason).toMatch(/operator "in" is not defined on string/);
    expect(evError('1 in payload').reason).toMatch(/map keys are strings/);
  });

  it('a non-string needle against a literal list of strings is a type error (expr-lang turns that list into a string set)', () => {
    expect(evError('payload.count in ["a", "b"]').reason).toBe(
      'invalid operation: float in ["a", "b"] (the list holds only strings; convert with string(...))',
    );
    expect(ev('string(payload.count) in ["3", "4"]')).toBe(true);
    expect(ev('payload.missing in ["a"]')).toBe(false);
  });

  it('matches uses RE2 syntax and finds a match anywhere', () => {
    expect(ev('payload.message matches "ell"')).toBe(true);
    expect(ev('payload.message matches "^ell"')).toBe(false);
    expect(ev('payload.message matches "(?i)^HEL+O$"')).toBe(true);
    expect(ev('let p = "l{2}"; payload.message matches p')).toBe(true);
    expect(evError('payload.message matches "a(b"').code).toBe('regex');
  });

  it('indexes lists from either end and slices them', () => {
    expect(ev('payload.list[0] + payload.list[-1]')).toBe('onetwo');
    expect(ev('payload.list[1.0]')).toBe('two');
    expect(evError('payload.list[2]').reason).toBe('index out of range: 2 (array length is 2) in payload.list[2]');
    expect(ev('[1, 2, 3, 4, 5][1:4]')).toEqual([2, 3, 4]);
    expect(ev('[1, 2, 3, 4, 5][1:-1]')).toEqual([2, 3, 4]);
    expect(ev('[1, 2, 3][:10]')).toEqual([1, 2, 3]);
    expect(ev('"héllo"[0:3]')).toBe('hé');
    expect(evError('payload.list.x').reason).toMatch(/cannot read "x" of an array/);
    expect(evError('payload.list["x"]').code).toBe('type');
  });

  it('. and [] read the same members, and $env reads names that are not identifiers', () => {
    expect(ev('payload["message"] == payload.message')).toBe(true);
    expect(ev('$env["x-y"]', { 'x-y': 5 })).toBe(5);
    expect(ev('"payload" in $env')).toBe(true);
  });

  it('the conditional needs a bool condition', () => {
    expect(ev('payload.count > 2 ? "big" : "small"')).toBe('big');
    expect(evError('payload.count ? 1 : 2').reason).toMatch(/the condition of \?: must be a bool, got float/);
  });

  it('an environment variable may share a builtin name', () => {
    expect(ev('join == 1 && len(["a"]) == 1', { join: 1, len: 2 })).toBe(true);
  });
});

describe('predicates and closures', () => {
  it('iterate with #, #index, #acc and nested closures', () => {
    expect(ev('all(payload.list, {len(#) == 3})')).toBe(true);
    expect(ev('any(payload.commits, {any(#.added, hasPrefix(#, "a"))})')).toBe(true);
    expect(ev('none(payload.list, # == "three") && one(payload.list, # == "one")')).toBe(true);
    expect(ev('count(payload.list, # startsWith "t")')).toBe(1);
    expect(ev('map(payload.list, #index)')).toEqual([0, 1]);
    expect(ev('find([1, 2, 3], # > 1)')).toBe(2);
    expect(ev('findLastIndex([1, 2, 3], # > 1)')).toBe(2);
    expect(ev('sum([1, 2, 3]) + sum([1, 2], # * 10)')).toBe(36);
    expect(ev('groupBy(["ab", "ac", "b"], #[0:1])')).toEqual({ a: ['ab', 'ac'], b: ['b'] });
    expect(ev('sortBy([{n: 2}, {n: 1}], .n)')).toEqual([{ n: 1 }, { n: 2 }]);
    expect(ev('reduce([1, 2, 3], #acc * #, 1)')).toBe(6);
    expect(ev('let outer = 10; map([1, 2], {let x = # + outer; x * 2})')).toEqual([22, 24]);
  });

  it('need an array and, for boolean predicates, a bool result', () => {
    expect(evError('filter(payload.missing, # > 1)').reason).toBe(
      'filter: the first argument must be an array, got nil (use ?? [] for an optional list)',
    );
    expect(evError('all([1], #)').reason).toBe('the predicate of all must return a bool, got int');
    expect(evError('reduce([], #acc)').reason).toMatch(/empty and no initial value/);
  });
});

describe('result contracts', () => {
  it('boolean uses say what they got', () => {
    const sel = compileBoolean('payload.message', 'selector');
    expect(() => sel.evaluate(env)).toThrow('selector must evaluate to a boolean, got string of 5 bytes');
    expect(() => compileBoolean('payload.missing', 'retry expression').evaluate(env)).toThrow(
      'retry expression must evaluate to a boolean, got nil',
    );
    expect(compileBoolean('payload.flag', 'when').evaluate(env)).toBe(true);
  });

  it('string uses refuse numbers and nil', () => {
    expect(() => compileString('payload.count', 'submit metadata').evaluate(env)).toThrow(
      'submit metadata must evaluate to a string, got float',
    );
    expect(() => compileString('payload.nothing', 'submit metadata').evaluate(env)).toThrow('got nil');
    expect(compileString('"wf-" + payload.message', 'submit metadata').evaluate(env)).toBe('wf-hello');
  });

  it('value uses give plain JS values (ints as numbers) and may refuse nil', () => {
    expect(compileValue('[1, 2.5, {a: 3}]', 'valueFrom.expression').evaluate(env)).toEqual([1, 2.5, { a: 3 }]);
    expect(() => compileValue('payload.missing', 'valueFrom.expression', { allowNil: false }).evaluate(env)).toThrow(
      'valueFrom.expression evaluated to nil',
    );
  });
});

describe('compile once, evaluate many', () => {
  it('a compiled expression gives independent results for different environments', () => {
    const sel = compileBoolean('payload.message != nil && metadata["x-name"] == ["value"]', 'selector');
    expect(sel.evaluate({ payload: { message: 'a' }, metadata: { 'x-name': ['value'] } })).toBe(true);
    expect(sel.evaluate({ payload: {}, metadata: { 'x-name': ['value'] } })).toBe(false);
    expect(sel.evaluate({ payload: { message: 'a' }, metadata: { 'x-name': ['other'] } })).toBe(false);
    expect(sel.evaluate({ payload: { message: 'a' }, metadata: { 'x-name': ['value'] } })).toBe(true);
  });

  it('let slots and predicate pointers do not leak between evaluations', () => {
    const e = compile('let n = len(xs); map(xs, # + n)');
    expect(e.evaluate({ xs: [1, 2] })).toEqual([3, 4]);
    expect(e.evaluate({ xs: [10] })).toEqual([11]);
  });
});

describe('inherited properties are never visible', () => {
  it('a value another module put on Object.prototype reads as missing, at the top level and in maps', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.pluggedIn = 'leaked';
    try {
      const env = { payload: { message: 'hi' } };
      expect(compile('payload.pluggedIn == nil').evaluate(env)).toBe(true);
      expect(compile('payload["pluggedIn"] ?? "none"').evaluate(env)).toBe('none');
      expect(() => compile('pluggedIn').evaluate(env)).toThrow(/unknown name pluggedIn/);
    } finally {
      delete proto.pluggedIn;
    }
  });
});
