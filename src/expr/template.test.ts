import { describe, expect, it } from 'vitest';
import { ExprError } from './errors.js';
import { compileTemplate, renderTemplate } from './template.js';
import { expandVars } from './vars.js';

const vars = {
  'inputs.parameters.foo': '3',
  'inputs.parameters.my-param': 'x y',
  'steps.a.outputs.result': 'heads',
  'workflow.status': 'Succeeded',
  'steps.gen.outputs.parameters.list': '[1,2]',
  item: 'a',
  'item.name': 'n1',
};

function fails(fn: () => unknown): ExprError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ExprError);
    return err as ExprError;
  }
  throw new Error('expected an error');
}

describe('renderTemplate', () => {
  it('replaces simple tags (trimmed) and expression tags', () => {
    expect(renderTemplate('v={{inputs.parameters.foo}} r={{ steps.a.outputs.result }}', vars)).toBe('v=3 r=heads');
    expect(renderTemplate('hello {{=asInt(inputs.parameters.foo) * 10}}', vars)).toBe('hello 30');
    expect(renderTemplate("{{=inputs.parameters['my-param']}}", vars)).toBe('x y');
    expect(renderTemplate('{{= sprig.dig("status", nil, workflow)}}', vars)).toBe('Succeeded');
    expect(renderTemplate('no tags at all', {})).toBe('no tags at all');
  });

  it('inserts strings as they are and other values as compact JSON', () => {
    expect(renderTemplate('{{=[1, 2]}} {{=1/2}} {{=4/2}} {{=true}} {{=toJson({"b": 1, "a": 2})}}', {})).toBe(
      '[1,2] 0.5 2 true {"a":2,"b":1}',
    );
    expect(renderTemplate('{{n}} {{o}}', { n: 5, o: { a: [1] } })).toBe('5 {"a":[1]}');
  });

  it('finds the end of an expression tag past }} inside strings and map literals', () => {
    expect(renderTemplate('{{=toJson({"a": {"b": 1}})}}!', {})).toBe('{"a":{"b":1}}!');
    expect(renderTemplate('{{="}}" + "x"}}', {})).toBe('}}x');
  });

  it('fails on unresolved names, listing every one with its position, never rendering ""', () => {
    const err = fails(() => renderTemplate('a {{inputs.parameters.nope}} b\n{{=steps.zz.outputs.result}}', vars));
    expect(err.code).toBe('unresolved');
    expect(err.reason).toBe(
      'cannot resolve 2 tags: {{inputs.parameters.nope}} (1:3) is not defined; {{=steps.zz.outputs.result}} (2:1) cannot read "outputs" of nil: steps.zz is nil (use ?. or check it != nil first)',
    );
    expect(err.line).toBe(1);
    expect(err.column).toBe(3);
  });

  it('can leave unresolved tags in place for a later stage', () => {
    const text = '{{inputs.parameters.foo}}-{{tasks.x.outputs.result}}-{{=tasks.x.outputs.result}}-{{=nope}}';
    expect(renderTemplate(text, vars, { leaveUnresolved: true })).toBe(
      '3-{{tasks.x.outputs.result}}-{{=tasks.x.outputs.result}}-{{=nope}}',
    );
  });

  it('fails on nil results and on variables without a value', () => {
    const nilVars = { 'steps.producer.outputs.parameters.msg': null };
    expect(fails(() => renderTemplate('{{= steps.producer.outputs.parameters.msg}}', nilVars)).reason).toMatch(/evaluated to nil/);
    expect(renderTemplate("{{= steps.producer.outputs.parameters.msg == ''}}", nilVars)).toBe('false');
    expect(fails(() => renderTemplate('{{steps.producer.outputs.parameters.msg}}', nilVars)).reason).toMatch(/has no value/);
  });

  it('reports syntax errors at their position in the template', () => {
    const err = fails(() => renderTemplate('line one\nx = {{=1 +}}', {}));
    expect(err.code).toBe('syntax');
    expect(err.message).toBe('template: unexpected end of expression at 2:11\n  x = {{=1 +}}\n            ^');
    expect(fails(() => renderTemplate('{{=!}}', {})).code).toBe('syntax');
    expect(fails(() => renderTemplate('a {{b', {})).reason).toBe('unclosed {{ tag (no matching }})');
    expect(fails(() => renderTemplate('{{ }}', {})).reason).toBe('empty {{}} tag');
  });

  it('type errors inside expression tags are errors, not unresolved tags', () => {
    const err = fails(() => renderTemplate('{{=inputs.parameters.foo + 1}}', vars, { leaveUnresolved: true }));
    expect(err.code).toBe('type');
  });

  it('a compiled template renders many variable sets', () => {
    const t = compileTemplate('{{=item}}:{{x}}');
    expect(t.hasTags).toBe(true);
    expect(t.render({ item: 'a', x: '1' })).toBe('a:1');
    expect(t.render({ item: 'b', x: '2' })).toBe('b:2');
  });
});

describe('expandVars', () => {
  it('nests dotted names; a name that is also a prefix becomes a map', () => {
    const env = expandVars(vars);
    expect((env.inputs as Record<string, Record<string, unknown>>).parameters['my-param']).toBe('x y');
    expect(env.item).toEqual({ name: 'n1' });
    expect(Object.getPrototypeOf(env)).toBeNull();
  });

  it('stores __proto__ and constructor as plain data', () => {
    const env = expandVars({ '__proto__.polluted': 'yes', 'constructor.prototype.bad': 'x' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(renderTemplate('{{=__proto__.polluted}}', { '__proto__.polluted': 'yes' })).toBe('yes');
    expect(Object.keys(env).sort()).toEqual(['__proto__', 'constructor']);
  });
});
