import { afterEach, describe, expect, it } from 'vitest';
import { checkUserValue, copyUserJson, getOwn, parseUserJson, protoKeyPath, setOwn, UnsafeJsonError } from './user-json.js';

afterEach(() => {
  delete (Object.prototype as Record<string, unknown>).polluted;
});

describe('user JSON', () => {
  it('refuses __proto__ anywhere, naming the document and the path', () => {
    expect(() => parseUserJson('{"a": [1, {"__proto__": {"polluted": 1}}]}', 'event body')).toThrow(
      'event body: a[1].__proto__ is a key named "__proto__"',
    );
    expect(() => parseUserJson('{"\\u005f_proto__": {}}', 'reply')).toThrow(UnsafeJsonError);
    expect(() => checkUserValue(JSON.parse('{"x": {"y/z": {"__proto__": 1}}}'), 'spec', 'spec')).toThrow('spec: spec.x["y/z"].__proto__');
    expect(protoKeyPath(JSON.parse('[[{"__proto__": 1}]]'))).toBe('[0][0].__proto__');
  });

  it('keeps constructor and prototype as plain data', () => {
    const v = parseUserJson('{"constructor": {"prototype": {"polluted": 1}}, "prototype": 2}', 'x') as Record<string, unknown>;
    expect(getOwn(v, 'constructor')).toEqual({ prototype: { polluted: 1 } });
    expect(getOwn({}, 'constructor')).toBeUndefined();
    expect(getOwn({}, '__proto__')).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('copies and sets own data properties only, never a prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"__proto__": {"polluted": 2}}}') as Record<string, unknown>;
    const copy = copyUserJson(hostile);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect((copy as Record<string, unknown>).polluted).toBeUndefined();
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', { polluted: 3 });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(target.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { k: [1, { j: 'v' }] });
    expect(copyUserJson(nullProto)).toEqual({ k: [1, { j: 'v' }] });
  });
});
