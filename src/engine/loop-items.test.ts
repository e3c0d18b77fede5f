import { describe, expect, it } from 'vitest';
import { expandLoop, isLooped, itemVariables, LoopError, stringifyValue } from './loop-items.js';
import { errorMessage } from '../log/error-message.js';

describe('loop items', () => {
  it('expands each loop source', () => {
    expect(expandLoop({ withItems: ['a', 1, { x: 1 }] })).toEqual(['a', 1, { x: 1 }]);
    expect(expandLoop({ withParam: '["a", {"b": 2}]' })).toEqual(['a', { b: 2 }]);
    expect(expandLoop({ withSequence: { count: 2 } })).toEqual(['0', '1']);
    expect(isLooped({})).toBe(false);
    expect(isLooped({ withParam: '[]' })).toBe(true);
  });

  it('names the field when the source is not a list', () => {
    expect(() => expandLoop({ withParam: 'nope' })).toThrow(LoopError);
    try {
      expandLoop({ withParam: '{"a":1}' });
      expect.unreachable();
    } catch (err) {
      expect((err as LoopError).field).toBe('withParam');
      expect(errorMessage(err)).toMatch(/is not a JSON list/);
    }
    expect(() => expandLoop({ withSequence: { count: 1, end: 2 } })).toThrow(/only one of count or end/);
  });

  it('holds every loop kind to the guard it is given, naming the field', () => {
    const over = (src: Parameters<typeof expandLoop>[0]) => {
      try {
        expandLoop(src, 2);
      } catch (err) {
        return [(err as LoopError).field, errorMessage(err)];
      }
      return undefined;
    };
    expect(over({ withItems: [1, 2, 3] })).toEqual(['withItems', expect.stringMatching(/3 items, more than the limit of 2/)]);
    expect(over({ withParam: '[1,2,3]' })).toEqual(['withParam', expect.stringMatching(/3 items, more than the limit of 2/)]);
    expect(over({ withSequence: { count: 3 } })).toEqual(['withSequence', expect.stringMatching(/3 items, more than the limit of 2/)]);
    expect(expandLoop({ withItems: [1, 2] }, 2)).toEqual([1, 2]);
  });

  it('exposes item and its fields as strings', () => {
    expect(itemVariables('x')).toEqual({ item: 'x' });
    expect(itemVariables({ os: 'linux', n: 2, deep: { v: true } })).toEqual({
      item: '{"os":"linux","n":2,"deep":{"v":true}}',
      'item.os': 'linux',
      'item.n': '2',
      'item.deep': '{"v":true}',
      'item.deep.v': 'true',
    });
    expect(stringifyValue(undefined)).toBe('');
  });
});

describe('withParam is user JSON', () => {
  it('refuses a __proto__ key and keeps constructor as data', () => {
    expect(() => expandLoop({ withParam: '[{"__proto__": {"polluted": 1}}]' })).toThrow(/\[0\]\.__proto__ is a key named "__proto__"/);
    expect(expandLoop({ withParam: '[{"constructor": 1}]' })).toEqual([{ constructor: 1 }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
