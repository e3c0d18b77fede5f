import { describe, expect, it } from 'vitest';
import { parseRefspec } from './refspec.js';

describe('fetch refspecs', () => {
  it('reads [+]SRC[:DST] with one * on both sides or none', () => {
    expect(parseRefspec('+refs/pull/*/head:refs/remotes/origin/pr/*')).toEqual({
      src: 'refs/pull/*/head',
      dst: 'refs/remotes/origin/pr/*',
      glob: true,
    });
    expect(parseRefspec('refs/meta/config')).toEqual({ src: 'refs/meta/config', dst: 'refs/meta/config', glob: false });
  });

  it('refuses what git would not take, saying why', () => {
    expect(() => parseRefspec('refs/pull/*:refs/pr')).toThrow('use one * in both sides, or none');
    expect(() => parseRefspec('refs/*/x/*:refs/*/x/*')).toThrow('use one * in both sides, or none');
    expect(() => parseRefspec('main:main')).toThrow('name full refs (refs/…)');
    expect(() => parseRefspec('a:b:c')).toThrow('is not [+]SRC[:DST]');
  });
});
