import { describe, expect, it } from 'vitest';
import { jsonEqual } from '../api/index.js';
import { applyMergePatch, mergePatchDiff } from './merge-patch.js';

describe('mergePatchDiff', () => {
  it('returns undefined when nothing changed, ignoring undefined members', () => {
    expect(mergePatchDiff({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] }, d: undefined })).toBeUndefined();
  });

  it('writes only the changed leaves of nested objects', () => {
    const from = { phase: 'Running', nodes: { a: { phase: 'Running', id: 'a' }, b: { phase: 'Succeeded', id: 'b' } } };
    const to = { phase: 'Running', nodes: { a: { phase: 'Succeeded', id: 'a', finishedAt: 't' }, b: { phase: 'Succeeded', id: 'b' } } };
    expect(mergePatchDiff(from, to)).toEqual({ nodes: { a: { phase: 'Succeeded', finishedAt: 't' } } });
  });

  it('removes keys with null and replaces arrays whole', () => {
    expect(mergePatchDiff({ message: 'x', children: ['a'] }, { children: ['a', 'b'] })).toEqual({ message: null, children: ['a', 'b'] });
  });

  it('produces a patch that turns from into to', () => {
    const from = { a: { b: 1, c: { d: 2 } }, e: [1], f: 'x' };
    const to = { a: { c: { d: 3, g: null as unknown as number }, h: { i: 1 } }, e: [2], j: true };
    const patch = mergePatchDiff(from, to)!;
    const applied = applyMergePatch(from, patch);
    // `g: null` in `to` cannot survive a merge patch (null means delete); everything else does.
    expect(applied).toEqual({ a: { c: { d: 3 }, h: { i: 1 } }, e: [2], j: true });
  });

  it('compares JSON deeply', () => {
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
  });
});
