import { describe, expect, it } from 'vitest';
import { compileBoolean } from '../expr/index.js';
import { ExpressionTagError, substituteExpressionTags } from './expression-tags.js';

const values: Record<string, string> = {
  '{{n}}': '3',
  '{{neg}}': '-2',
  '{{bool}}': 'true',
  '{{word}}': 'Failed',
  '{{inject}}': '1 || true',
  '{{quote}}': `it's "x" \\ y`,
  '{{list}}': '[1, "two", null]',
  '{{tick}}': 'a`b',
  '{{=1 + 2}}': '3',
};
const sub = (text: string) =>
  substituteExpressionTags(text, (tag) => {
    if (!(tag in values)) throw new Error(`unknown ${tag}`);
    return values[tag]!;
  });
const evaluate = (text: string) => compileBoolean(sub(text), 'test').evaluate({});

describe('substituteExpressionTags', () => {
  it('leaves text without tags alone', () => {
    expect(sub('asInt(lastRetry.exitCode) > 2')).toBe('asInt(lastRetry.exitCode) > 2');
  });

  it('inserts numbers, booleans, lists as literals and other text as one string literal', () => {
    expect(sub('x > {{n}} && y == {{neg}} && {{bool}}')).toBe('x > 3 && y == (-2) && true');
    expect(sub('s == {{word}}')).toBe('s == "Failed"');
    expect(sub('1 in {{list}}')).toBe('1 in [1, "two", nil]');
    expect(sub('{{=1 + 2}} == 3')).toBe('3 == 3');
  });

  it('never lets a value change the structure of the expression', () => {
    // Text substitution (the peer) would give `false && 1 || true`, which is true.
    expect(evaluate('false && {{inject}} == "1 || true"')).toBe(false);
    expect(evaluate('"{{inject}}" == "1 || true"')).toBe(true);
    expect(evaluate(`'{{quote}}' == "it's \\"x\\" \\\\ y"`)).toBe(true);
    expect(evaluate(`"{{quote}}" == '{{quote}}'`)).toBe(true);
  });

  it('refuses a backtick inside a raw string and names the tag', () => {
    expect(() => sub('`{{tick}}` == "x"')).toThrow(ExpressionTagError);
    expect(() => sub('`{{tick}}` == "x"')).toThrow(/\{\{tick\}\} holds a backtick/);
    expect(sub('`{{word}}` == "Failed"')).toBe('`Failed` == "Failed"');
  });

  it('reports an unclosed tag', () => {
    expect(() => sub('x == {{n')).toThrow(/unclosed \{\{ tag/);
  });

  it('keeps any value one operand (randomised over quotes, escapes, operators and brackets)', () => {
    const alphabet = [
      'a',
      '1',
      '-',
      '.',
      'e',
      ' ',
      '"',
      "'",
      '`',
      '\\',
      ',',
      '[',
      ']',
      '{',
      '}',
      '(',
      ')',
      '|',
      '&',
      '=',
      '!',
      'true',
      'nil',
      '\n',
      '\u2028',
      '\u0000',
      'é',
    ];
    let seed = 20261123;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let n = 0; n < 400; n++) {
      let value = '';
      for (let k = Math.floor(next() * 12); k > 0; k--) value += alphabet[Math.floor(next() * alphabet.length)];
      const valueOf = () => value;
      const one = substituteExpressionTags('len([{{v}}]) == 1', valueOf);
      expect(compileBoolean(one, 'fuzz').evaluate({}), `${JSON.stringify(value)} → ${one}`).toBe(true);
      if (value.includes('`')) continue;
      const quoted = substituteExpressionTags(`len(['{{v}}', "{{v}}", \`{{v}}\`]) == 3 && '{{v}}' == "{{v}}"`, valueOf);
      expect(compileBoolean(quoted, 'fuzz').evaluate({}), `${JSON.stringify(value)} → ${quoted}`).toBe(true);
    }
  });
});
