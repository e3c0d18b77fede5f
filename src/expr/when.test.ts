import { describe, expect, it } from 'vitest';
import { ExprError } from './errors.js';
import { compileWhen, evaluateWhen } from './when.js';

function fails(text: string, vars: Record<string, unknown> = {}): ExprError {
  try {
    evaluateWhen(text, vars);
  } catch (err) {
    expect(err).toBeInstanceOf(ExprError);
    return err as ExprError;
  }
  throw new Error(`expected ${text} to fail`);
}

describe('when', () => {
  const vars = {
    'steps.flip.outputs.result': 'heads',
    'inputs.parameters.n': '10',
    'inputs.parameters.flag': 'true',
    'inputs.parameters.msg': "it's a b",
  };

  it.each([
    ['{{steps.flip.outputs.result}} == heads', true],
    ['{{steps.flip.outputs.result}} != heads', false],
    ["'{{steps.flip.outputs.result}}' == 'heads'", true],
    ['"{{steps.flip.outputs.result}}-x" == "heads-x"', true],
    ['{{steps.flip.outputs.result}} =~ "^hea"', true],
    ['{{steps.flip.outputs.result}} !~ tai', true],
    ['{{inputs.parameters.n}} > 5 && {{inputs.parameters.n}} <= 10.0', true],
    ['{{inputs.parameters.n}} == 10.0', true],
    ['{{inputs.parameters.n}} + 1 == 11', true],
    ['{{inputs.parameters.n}} > -5', true],
    ['{{inputs.parameters.flag}}', true],
    ['!{{inputs.parameters.flag}} || false', false],
    ['{{steps.flip.outputs.result}} in (tails, heads)', true],
    ['{{steps.flip.outputs.result}} IN (tails)', false],
    ['( heads == heads && tails == tails ) || x == y', true],
    ['my-value == my-value', true],
    ['{{inputs.parameters.msg}} == "it\'s a b"', true],
    ['{{=inputs.parameters.n == "10"}}', true],
    ['{{=asInt(inputs.parameters.n) > 20}} || 1 == 1', true],
  ])('%s → %s', (text, want) => {
    expect(evaluateWhen(text, vars)).toBe(want);
  });

  it('substitutes a tag as one operand, so a value cannot inject operators', () => {
    expect(evaluateWhen('{{x}} == "a || true"', { x: 'a || true' })).toBe(true);
    expect(evaluateWhen('{{x}} == b', { x: 'a || true' })).toBe(false);
    expect(fails('{{x}}', { x: '1 == 1' }).reason).toBe('when must evaluate to a boolean, got string "1 == 1"');
  });

  it('requires a boolean result', () => {
    expect(fails('{{f}}', { f: 'True' }).message).toBe('when must evaluate to a boolean, got string "True" at 1:1\n  {{f}}\n  ^^^^^');
    expect(fails('1 + 1').reason).toBe('when must evaluate to a boolean, got number 2');
  });

  it('fails on unresolved tags, naming them', () => {
    const err = fails('{{steps.nope.outputs.result}} == x && {{=tasks.a.outputs.result}} == y');
    expect(err.code).toBe('unresolved');
    expect(err.reason).toMatch(
      /^cannot resolve \{\{steps.nope.outputs.result\}\} \(1:1\) is not defined; \{\{=tasks.a.outputs.result\}\} \(1:39\) unknown name tasks/,
    );
  });

  it('points at syntax and type errors', () => {
    expect(fails('a == ').message).toBe('when: unexpected end of condition at 1:6\n  a == \n       ^');
    expect(fails('a == b c').reason).toMatch(/unexpected operand/);
    expect(fails('(a == b').reason).toMatch(/expected "\)"/);
    expect(fails('a && true').reason).toBe('the operands of && must be true or false, got string "a"');
    expect(fails('a < 1').reason).toBe('cannot apply < to string "a" and number 1');
    expect(fails('a =~ "("').code).toBe('regex');
    expect(fails('a ; b').reason).toMatch(/unexpected character ";"/);
    expect(fails('!'.repeat(5000) + 'true').code).toBe('limit');
    expect(fails('('.repeat(5000) + 'true').code).toBe('limit');
  });

  it('compiles once and evaluates with different variables', () => {
    const w = compileWhen('{{r}} == heads');
    expect(w.evaluate({ r: 'heads' })).toBe(true);
    expect(w.evaluate({ r: 'tails' })).toBe(false);
  });
});
