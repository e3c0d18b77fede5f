import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { ExprError } from './errors.js';
import { formatGoFloat } from './format.js';

const ev = (src: string, env: Record<string, unknown> = {}): unknown => compile(src).evaluate(env);
const evErr = (src: string, env: Record<string, unknown> = {}): ExprError => {
  try {
    compile(src).evaluate(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ExprError);
    return err as ExprError;
  }
  throw new Error(`expected ${src} to fail`);
};

describe('conversions', () => {
  it('string() prints like Go %v', () => {
    expect(
      ev('string(1) + "|" + string(3.0) + "|" + string(1.5) + "|" + string(1e6) + "|" + string(123456.0) + "|" + string(0.00001)'),
    ).toBe('1|3|1.5|1e+06|123456|1e-05');
    expect(ev('string(nil) + string(true) + string([1, "a"]) + string({"b": 1, "a": [2]})')).toBe('<nil>true[1 a]map[a:[2] b:1]');
  });

  it('formatGoFloat matches Go for large, small and special values', () => {
    expect([1234567, 1e21, 1e-7, 0.0001, -0, -2.5, Infinity, NaN].map(formatGoFloat)).toEqual([
      '1.234567e+06',
      '1e+21',
      '1e-07',
      '0.0001',
      '-0',
      '-2.5',
      '+Inf',
      'NaN',
    ]);
  });

  it('int/asInt and float/asFloat parse strings strictly', () => {
    expect(ev('int("42") + int(3.9) + int(-3.9) + asInt("-7")')).toBe(42 + 3 - 3 - 7);
    expect(ev('float("30.5") + asFloat("1e2")')).toBe(130.5);
    expect(evErr('int("3.5")').reason).toBe('invalid operation: int(string of 3 bytes): not an integer');
    expect(evErr('asInt("abc")').code).toBe('call');
    expect(evErr('float("x")').reason).toMatch(/not a number/);
    expect(evErr('int(nil)').code).toBe('type');
  });

  it('toJSON is indented, toJson compact, both with sorted keys; fromJSON gives floats', () => {
    expect(ev('toJSON({"b": 1, "a": [1, 2]})')).toBe('{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}');
    expect(ev('toJson({"b": 1, "a": [1, 2.5, "x", nil, true]})')).toBe('{"a":[1,2.5,"x",null,true],"b":1}');
    expect(ev('type(fromJSON("1")) + type(fromJson("[1]")[0])')).toBe('floatfloat');
    expect(ev('fromJSON(`{"a": {"b": [1, 2]}}`).a.b[1]')).toBe(2);
    expect(evErr('fromJSON("{bad")').reason).toMatch(/^fromJSON: invalid JSON/);
    expect(evErr('toJson(1 / 0)').reason).toBe('cannot encode +Inf as JSON');
  });

  it('base64 round-trips and rejects invalid input', () => {
    expect(ev('fromBase64(toBase64("héllo"))')).toBe('héllo');
    expect(ev('toBase64("Hello World")')).toBe('SGVsbG8gV29ybGQ=');
    expect(evErr('fromBase64("***")').reason).toMatch(/illegal base64/);
  });
});

describe('strings', () => {
  it('len counts UTF-8 bytes of strings, as Go does', () => {
    expect(ev('len("abc") + len("é") * 10 + len([1, 2]) * 100 + len({"a": 1}) * 1000')).toBe(3 + 20 + 200 + 1000);
  });

  it('trim, split, join, replace, repeat, indexOf behave like Go strings functions', () => {
    expect(ev('trim("  x  ") + trim("__x__", "_") + trimPrefix("v1.2", "v") + trimSuffix("a.txt", ".txt")')).toBe('xx1.2a');
    expect(ev('split("a,b,c", ",")')).toEqual(['a', 'b', 'c']);
    expect(ev('split("a,b,c", ",", 2)')).toEqual(['a', 'b,c']);
    expect(ev('splitAfter("a,b,c", ",")')).toEqual(['a,', 'b,', 'c']);
    expect(ev('join(["a", "b"], "-") + join(["c"])')).toBe('a-bc');
    expect(ev('replace("aaa", "a", "b") + replace("aaa", "a", "b", 2)')).toBe('bbbbba');
    expect(ev('repeat("ab", 3)')).toBe('ababab');
    expect(ev('indexOf("héllo", "l") + lastIndexOf("apple pie apple", "apple") * 100')).toBe(3 + 1000);
    expect(ev('upper("abc") + lower("DEF") + string(hasPrefix("abc", "ab")) + string(hasSuffix("abc", "bc"))')).toBe('ABCdeftruetrue');
    expect(evErr('join([1], ",")').reason).toBe('join: element 0 must be a string, got int');
    expect(evErr('upper(1)').reason).toBe('upper: argument 1 must be a string, got int');
  });
});

describe('collections and numbers', () => {
  it('work on lists and maps without changing their inputs', () => {
    const env = { xs: [3, 1, 2], m: { b: 2, a: 1 } };
    expect(ev('sort(xs)', env)).toEqual([1, 2, 3]);
    expect(ev('sort(xs, "desc")', env)).toEqual([3, 2, 1]);
    expect(env.xs).toEqual([3, 1, 2]);
    expect(ev('keys(m)', env)).toEqual(['a', 'b']);
    expect(ev('values(m)', env)).toEqual([1, 2]);
    expect(ev('toPairs(m)', env)).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(ev('fromPairs([["x", 1]])')).toEqual({ x: 1 });
    expect(ev('first(xs) + last(xs)', env)).toBe(5);
    expect(ev('first([])')).toBeNull();
    expect(ev('get(xs, 5) == nil && get(m, "zz") == nil && get(xs, -1) == 2', env)).toBe(true);
    expect(ev('take(xs, 2)', env)).toEqual([3, 1]);
    expect(ev('reverse(xs)', env)).toEqual([2, 1, 3]);
    expect(ev('uniq([1, 1.0, "a", "a"])')).toEqual([1, 'a']);
    expect(ev('concat([1], [2, 3], [])')).toEqual([1, 2, 3]);
    expect(ev('flatten([1, [2, [3]]])')).toEqual([1, 2, 3]);
    expect(evErr('sort([1, "a"])').reason).toMatch(/only sort numbers or strings/);
  });

  it('number functions', () => {
    expect(ev('max(1, 5, 3) + min([4, 2]) + abs(-2) + abs(-2.5)')).toBe(5 + 2 + 2 + 2.5);
    expect(ev('ceil(1.2) + floor(1.8) + round(2.5) + round(-2.5)')).toBe(2 + 1 + 3 - 3);
    expect(ev('mean([1, 2, 3, 4]) + median([3, 1, 2])')).toBe(2.5 + 2);
    expect(ev('bitand(12, 10) + bitor(12, 10) * 100 + bitshl(1, 4) * 10000')).toBe(8 + 1400 + 160000);
    expect(ev('bitnot(10)')).toBe(-11);
  });

  it('jsonpath picks values from JSON text or values', () => {
    const j = JSON.stringify({ some: { path: 'v', list: [{ n: 1 }, { n: 2 }], 'a-b': true } });
    expect(ev('jsonpath(j, "$.some.path")', { j })).toBe('v');
    expect(ev('jsonpath(j, "$.some[\'a-b\']")', { j })).toBe(true);
    expect(ev('jsonpath(j, "$.some.list[-1].n")', { j })).toBe(2);
    expect(ev('jsonpath(j, "$.some.list[*].n")', { j })).toEqual([1, 2]);
    expect(ev('jsonpath(j, "$..n")', { j })).toEqual([1, 2]);
    expect(evErr('jsonpath(j, "$.some.nope")', { j }).reason).toMatch(/key "nope" not found/);
    expect(ev('jsonpath(j, "$.some.list[?(@.n)].n")', { j })).toEqual([1, 2]); // filters: see below
  });
});

describe('sprig', () => {
  it('keeps Sprig argument order and never-failing conversions', () => {
    expect(ev('sprig.toString(3.0) + sprig.toString(3) + sprig.toString("x")')).toBe('33x');
    expect(ev('sprig.int("abc") + sprig.int("42") + sprig.int("3.0") + sprig.int(2.9) + sprig.int("0x10")')).toBe(0 + 42 + 3 + 2 + 16);
    expect(ev('sprig.float64("1.5") + sprig.float64("x")')).toBe(1.5);
    expect(ev('sprig.trim("  x ") + sprig.trimPrefix("v", "v1") + sprig.trimSuffix(".go", "a.go") + sprig.trimAll("$", "$5$")')).toBe(
      'x1a5',
    );
    expect(ev('sprig.contains("ell", "hello") && sprig.hasPrefix("he", "hello") && sprig.hasSuffix("lo", "hello")')).toBe(true);
    expect(ev('sprig.replace("a", "b", "banana") + sprig.repeat(2, "x") + sprig.substr(1, 3, "hello") + sprig.trunc(2, "hello")')).toBe(
      'bbnbnbxxelhe',
    );
    expect(ev('sprig.upper("a") + sprig.lower("B") + sprig.title("hello world")')).toBe('AbHello World');
    expect(ev('sprig.join(",", ["a", 1, nil]) + sprig.cat("a", 1, nil, "b") + sprig.quote("x") + sprig.squote("y")')).toBe(
      'a,1a 1 b"x"\'y\'',
    );
    expect(ev('sprig.splitList(",", "a,b")')).toEqual(['a', 'b']);
    expect(ev('sprig.split(",", "a,b")')).toEqual({ _0: 'a', _1: 'b' });
  });

  it('defaults, dicts and lists', () => {
    expect(ev('sprig.default("d", "") + sprig.default("d", "v") + sprig.coalesce(nil, "", "c")')).toBe('dvc');
    expect(ev('sprig.empty(0) && sprig.empty([]) && !sprig.empty("x") && sprig.ternary("a", "b", true) == "a"')).toBe(true);
    expect(ev('sprig.dig("status", nil, workflow)', { workflow: { status: 'Succeeded' } })).toBe('Succeeded');
    expect(ev('sprig.dig("a", "b", "none", m)', { m: { a: {} } })).toBe('none');
    expect(ev('sprig.dict("a", 1, "b", 2)')).toEqual({ a: 1, b: 2 });
    expect(ev('sprig.get(m, "x") + sprig.get(m, "missing")', { m: { x: 'y' } })).toBe('y');
    const m = { a: 1 };
    expect(ev('sprig.set(m, "b", 2)', { m })).toEqual({ a: 1, b: 2 });
    expect(m).toEqual({ a: 1 });
    expect(ev('sprig.hasKey(m, "a") && !sprig.hasKey(m, "toString")', { m })).toBe(true);
    expect(ev('sprig.pick({"a": 1, "b": 2}, "a")')).toEqual({ a: 1 });
    expect(ev('sprig.omit({"a": 1, "b": 2}, "a")')).toEqual({ b: 2 });
    expect(ev('sprig.append(sprig.list(1, 2), 3)')).toEqual([1, 2, 3]);
    expect(ev('sprig.has(2, [1, 2]) && sprig.first([9]) == 9 && sprig.last([1, 9]) == 9')).toBe(true);
    expect(ev('sprig.without([1, 2, 3], 2) == [1, 3] && sprig.uniq([1, 1]) == [1] && sprig.compact(["", "a", nil]) == ["a"]')).toBe(true);
  });

  it('math, encodings and regular expressions', () => {
    expect(ev('sprig.add(1, "2", 3.5) + sprig.sub(5, 2) + sprig.mul(2, 3) + sprig.div(7, 2) + sprig.mod(7, 4)')).toBe(6 + 3 + 6 + 3 + 3);
    expect(evErr('sprig.div(1, 0)').reason).toMatch(/divide by zero/);
    expect(ev('sprig.b64dec(sprig.b64enc("hi"))')).toBe('hi');
    expect(ev('sprig.sha256sum("abc")')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(ev('sprig.regexMatch("^v[0-9]+$", "v12")')).toBe(true);
    expect(ev('sprig.regexFind("[0-9]+", "ab12cd34")')).toBe('12');
    expect(ev('sprig.regexFindAll("[0-9]+", "ab12cd34", -1)')).toEqual(['12', '34']);
    expect(ev('sprig.regexReplaceAll("a(x*)b", "-ab-axxb-", "${1}W")')).toBe('-W-xxW-');
    expect(ev('sprig.regexReplaceAllLiteral("a(x*)b", "-ab-", "${1}")')).toBe('-${1}-');
    expect(ev('sprig.regexSplit("z+", "pizza", -1)')).toEqual(['pi', 'a']);
    expect(ev('sprig.regexQuoteMeta("a.b*c")')).toBe('a\\.b\\*c');
  });
});

describe('sprig.date', () => {
  it('formats Unix seconds and RFC 3339 times with a Go layout, in UTC', () => {
    expect(ev('sprig.date("2006-01-02", 1700000000)')).toBe('2023-11-14');
    expect(ev('sprig.date("2006-01-02T15:04:05Z07:00", t)', { t: '2024-05-01T10:00:00+02:00' })).toBe('2024-05-01T08:00:00Z');
    expect(ev('sprig.date("Mon Jan _2 3:04:05PM MST 2006 -0700", 1700000000)')).toBe('Tue Nov 14 10:13:20PM UTC 2023 +0000');
    expect(ev('sprig.date("Monday, 02-January-06 .000 .999 002", t)', { t: '2024-02-03T04:05:06.120Z' })).toBe(
      'Saturday, 03-February-24 .120 .12 034',
    );
    expect(ev('sprig.date("20060102150405", 1.9)')).toBe('19700101000001');
  });

  it('refuses what is not a time instead of reading the clock', () => {
    expect(evErr('sprig.date("2006", "yesterday")').reason).toMatch(/is not an RFC 3339 time/);
    expect(evErr('sprig.date("2006", nil)').code).toBe('type');
    expect(evErr('sprig.date("2006", 1e300)').reason).toMatch(/out of the range of dates/);
  });

  it('reads workflow.creationTimestamp in an expression (a map of its forms) as its RFC3339 time', () => {
    const workflow = { creationTimestamp: { RFC3339: '2024-05-01T10:00:00Z', s: '1714557600', Y: '2024' } };
    expect(ev('sprig.date("2006", workflow.creationTimestamp)', { workflow })).toBe('2024');
    expect(evErr('sprig.date("2006", m)', { m: { s: '1' } }).code).toBe('type');
  });
});

describe('jsonpath filters', () => {
  const doc = JSON.stringify({
    employees: [
      { name: 'x', age: 30, tags: ['a'] },
      { name: 'y', age: 40 },
      { name: 'z', age: 50, boss: true },
    ],
  });
  const jp = (path: string): unknown => ev(`jsonpath(d, ${JSON.stringify(path)})`, { d: doc });

  it('selects the elements a filter holds for', () => {
    expect(jp('$.employees[?(@.name=="x")].age')).toEqual([30]);
    expect(jp('$.employees[?(@.age > 35 && @.age <= 50)].name')).toEqual(['y', 'z']);
    expect(jp("$.employees[?(@.name != 'x' || @.age < 35)].name")).toEqual(['x', 'y', 'z']);
    expect(jp('$.employees[?(@.age >= 40)].name')).toEqual(['y', 'z']);
    expect(jp('$.employees[?(@.age < $.employees[1].age)].name')).toEqual(['x']);
    expect(jp('$.employees[?(@.tags[0] == "a")].name')).toEqual(['x']);
  });

  it('tests existence with a bare path, negation and parentheses', () => {
    expect(jp('$.employees[?(@.boss)].name')).toEqual(['z']);
    expect(jp('$.employees[?(!@.boss)].name')).toEqual(['x', 'y']);
    expect(jp('$.employees[?(!(@.age == 30 || @.boss == true))].name')).toEqual(['y']);
  });

  it('refuses malformed filters with the reason, and never runs code', () => {
    expect(evErr('jsonpath(d, "$.employees[?(@.x ==)]")', { d: doc }).reason).toMatch(/invalid path .*unexpected/);
    expect(evErr('jsonpath(d, "$.employees[?(constructor.constructor(\\"return 1\\")())]")', { d: doc }).code).toBe('call');
    expect(evErr(`jsonpath(d, "$[?(${'('.repeat(40)}@.a${')'.repeat(40)})]")`, { d: doc }).reason).toMatch(/nested more than 32 levels/);
  });
});
