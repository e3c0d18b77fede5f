import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { ExprError } from './errors.js';
import { tokenize } from './lexer.js';

const ev = (src: string, env: Record<string, unknown> = {}): unknown => compile(src).evaluate(env);

function error(src: string, options: Parameters<typeof compile>[1] = {}): ExprError {
  try {
    compile(src, options);
  } catch (err) {
    expect(err).toBeInstanceOf(ExprError);
    return err as ExprError;
  }
  throw new Error(`expected ${JSON.stringify(src)} not to compile`);
}

describe('lexer', () => {
  it('reads numbers in every base, with underscores, and keeps ranges apart from floats', () => {
    expect(ev('0x2A + 0o52 + 0b101010 + 42')).toBe(168);
    expect(ev('1_000_000')).toBe(1_000_000);
    expect(ev('.5 + 1.5e1')).toBe(15.5);
    expect(ev('1..3')).toEqual([1, 2, 3]);
    expect(ev('type(1.)')).toBe('float');
  });

  it('decodes Go-style string escapes, single quotes and raw strings', () => {
    expect(ev(String.raw`"a\tb\n\"c\" \x41\u00e9\U0001F600 \101"`)).toBe('a\tb\n"c" Aé😀 A');
    expect(ev(String.raw`'it\'s'`)).toBe("it's");
    expect(ev('`raw \\n`')).toBe('raw \\n');
  });

  it('skips line and block comments', () => {
    expect(ev('1 + /* two */ 2 // three\n + 3')).toBe(6);
  });

  it('points at bad characters, escapes and unterminated strings', () => {
    expect(error('a @ b').message).toContain('unrecognized character "@" (U+0040) at 1:3');
    expect(error('"abc\\q"').message).toContain('invalid escape sequence \\q at 1:5');
    expect(error('"abc').message).toContain('string literal not terminated at 1:1');
    expect(error('1abc').message).toContain('bad number syntax "1abc"');
    expect(error('/* open').reason).toBe('unclosed comment');
  });

  it('tokens carry exact offsets', () => {
    const toks = tokenize('a  &&\n b');
    expect(toks.map((t) => [t.value, t.start, t.end])).toEqual([
      ['a', 0, 1],
      ['&&', 3, 5],
      ['b', 7, 8],
      ['', 8, 8],
    ]);
  });
});

describe('precedence and associativity', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ** 3 ** 2', 512],
    ['-2 ** 2', -4],
    ['10 - 4 - 3', 3],
    ['7 % 4 * 2', 6],
    ['true || false && false', true],
    ['!true == false', true],
    ['not false and true', true],
    // As in expr-lang, every comparison-level operator chains: this is `1 < 2 && 2 == true`.
    ['1 < 2 == true', false],
    ['(1 < 2) == true', true],
    ['1 < 2 < 3', true],
    ['3 > 2 > 1', true],
    ['1 < 3 < 2', false],
    ['1..2 == [1, 2]', true],
    ['nil ?? 2', 2],
    ['nil ?? nil ?? 3', 3],
    ['true ? 1 : 2 + 10', 1],
    ['false ? 1 : true ? 2 : 3', 2],
    ['false ?: true', true],
    ['"ab" + "c" == "abc"', true],
    ['[1, 2, 3] | filter(# > 1) | map(# * 10)', [20, 30]],
  ])('%s', (src, want) => {
    expect(ev(src)).toEqual(want);
  });

  it('refuses to mix ?? with other operators without parentheses', () => {
    expect(error('nil ?? 1 == 1').reason).toMatch(/cannot be mixed/);
    expect(ev('(nil ?? 1) == 1')).toBe(true);
  });

  it('negates in, matches, contains, startsWith and endsWith with not', () => {
    expect(ev('1 not in [2, 3]')).toBe(true);
    expect(ev('"abc" not contains "b"')).toBe(false);
    expect(ev('"abc" not startsWith "x" && "abc" not endsWith "x" && "abc" not matches "^x"')).toBe(true);
    expect(error('1 not + 2').reason).toMatch(/after "not"/);
  });

  it('parses let bindings, predicates with and without braces, and property names that are operator words', () => {
    expect(ev('let x = 2; let y = x * 3; x + y')).toBe(8);
    expect(ev('filter([1, 2, 3], # >= 2)')).toEqual([2, 3]);
    expect(ev('map([{a: 1}, {a: 2}], .a)')).toEqual([1, 2]);
    expect(ev('m.in + m.not', { m: { in: 1, not: 2 } })).toBe(3);
    expect(ev('reduce(1..4, #acc + # * #index)')).toBe(1 + 2 * 1 + 3 * 2 + 4 * 3);
  });

  it('parses map literals with name, string, number and computed keys', () => {
    expect(ev('{a: 1, "b-c": 2, 3: 3, ("d" + "e"): 4}')).toEqual({ a: 1, 'b-c': 2, '3': 3, de: 4 });
    expect(ev('{a: 1,}')).toEqual({ a: 1 });
  });
});

describe('syntax errors', () => {
  it('show line:column and a caret under the offending token', () => {
    const err = error('payload.a &&\n  payload.b ==');
    expect(err.code).toBe('syntax');
    expect(err.line).toBe(2);
    expect(err.message).toBe('unexpected end of expression at 2:15\n    payload.b ==\n                ^');
  });

  it('name the use of the expression', () => {
    const err = error('garbage!!!!!!', { what: 'selector' });
    expect(err.message).toBe('selector: unexpected token "!" at 1:8\n  garbage!!!!!!\n         ^');
  });

  it('say which bracket is not closed', () => {
    expect(error('(1 + 2').reason).toBe('unexpected end of expression, expected ")" to close the "(" at 1:1');
    expect(error('[1, 2').reason).toMatch(/to close the list opened at 1:1/);
    expect(error('len("a"').reason).toMatch(/to close the call of len opened at 1:4/);
  });

  it('reject # outside predicates, unknown pointers, empty input and unknown functions', () => {
    expect(error('# > 1').reason).toMatch(/outside a predicate/);
    expect(error('filter([1], #foo)').reason).toMatch(/unknown pointer #foo/);
    expect(error('   ').reason).toBe('empty expression');
    expect(error('nope(1)').reason).toBe('unknown function nope');
    expect(error('toString(1)').reason).toBe('unknown function toString (did you mean sprig.toString?)');
    expect(error('sprig.nope(1)').reason).toBe('unknown function sprig.nope');
    expect(error('now()').reason).toMatch(/date and time functions are not available/);
    expect(error('len(1, 2)').reason).toBe('len takes 1 argument, got 2');
    expect(error('a.b(1)').reason).toMatch(/method calls are not supported/);
    expect(error('reduce([1], #acc + #acc, 0) + #acc').reason).toMatch(/outside a predicate/);
    expect(error('map([1], #acc)').reason).toMatch(/#acc is only available in the predicate of reduce/);
  });

  it('check regex literals when compiling', () => {
    const err = error('x matches "a(b"');
    expect(err.code).toBe('regex');
    expect(err.column).toBe(11);
  });

  it('reject integer literals beyond 64 bits', () => {
    expect(error('9223372036854775808').reason).toMatch(/too large/);
    expect(ev('9223372036854775807 + 0 == 9223372036854775807')).toBe(true);
  });
});

describe('limits', () => {
  it('bound the source length', () => {
    const err = error('1 + '.repeat(3000) + '1');
    expect(err.code).toBe('limit');
    expect(err.reason).toMatch(/more than the limit of 10000/);
  });

  it('bound the number of AST nodes', () => {
    const err = error('[' + '1,'.repeat(600) + '1]', { limits: { maxNodes: 500 } });
    expect(err.code).toBe('limit');
    expect(err.reason).toMatch(/more than 500 nodes/);
  });

  it('bound nesting depth for parentheses, unary chains and long operator chains', () => {
    expect(error('('.repeat(300) + '1' + ')'.repeat(300)).code).toBe('limit');
    expect(error('!'.repeat(1000) + 'true').code).toBe('limit');
    expect(error('-'.repeat(1000) + '1').code).toBe('limit');
    expect(error(Array(300).fill('a').join(' || ')).reason).toMatch(/nested more than 200 levels/);
    expect(ev(Array(150).fill('false').join(' || '))).toBe(false);
  });
});
