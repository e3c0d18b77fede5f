import { describe, expect, it } from 'vitest';
import {
  displayNameOf,
  exitHookName,
  fnv1a32,
  itemLabel,
  loopItemName,
  MAX_POD_NAME_LENGTH,
  nodeIdFor,
  podNameFor,
  retryAttemptName,
  stepGroupName,
  stepName,
  taskName,
} from './node-naming.js';

describe('node naming', () => {
  it('hashes with FNV-1a 32 (known vectors)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('hashes the UTF-8 bytes of any name, as over an encoded buffer (ids of stored nodes must not change)', () => {
    const overBytes = (text: string): number => {
      let hash = 0x811c9dc5;
      for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
      return hash >>> 0;
    };
    const names = [
      'wf[0].a',
      'é',
      'wf(0:ключ)',
      '名前',
      'emoji 🚀 item',
      'lone \ud800 high',
      'lone \udc00 low',
      'end \ud83d',
      '\u07ff\u0800\uffff',
    ];
    for (const name of names) expect(fnv1a32(name), name).toBe(overBytes(name));
  });

  it('gives the root node the workflow name as id and hashes other names', () => {
    expect(nodeIdFor('wf', 'wf')).toBe('wf');
    const id = nodeIdFor('wf', 'wf[0].a');
    expect(id).toMatch(/^wf-\d+$/);
    expect(nodeIdFor('wf', 'wf[0].a')).toBe(id);
    expect(nodeIdFor('wf', 'wf[0].b')).not.toBe(id);
  });

  it('builds names in the familiar shapes', () => {
    const group = stepGroupName('wf', 0);
    expect(group).toBe('wf[0]');
    expect(stepName(group, 'build')).toBe('wf[0].build');
    expect(loopItemName(stepName(group, 'build'), 1, 'b')).toBe('wf[0].build(1:b)');
    expect(taskName('wf', 'x')).toBe('wf.x');
    expect(retryAttemptName('wf.x', 2)).toBe('wf.x(2)');
    expect(exitHookName('wf')).toBe('wf.onExit');
  });

  it('labels items independently of key order', () => {
    expect(itemLabel({ b: 2, a: 'x' })).toBe('a:x,b:2');
    expect(itemLabel({ a: 'x', b: 2 })).toBe('a:x,b:2');
    expect(itemLabel(3)).toBe('3');
    expect(itemLabel([1, 'a'])).toBe('[1,"a"]');
    expect(itemLabel(null)).toBe('null');
  });

  it('derives display names from the last segment', () => {
    expect(displayNameOf('wf', 'wf')).toBe('wf');
    expect(displayNameOf('wf[0]', 'wf')).toBe('[0]');
    expect(displayNameOf('wf[0].build', 'wf')).toBe('build');
    expect(displayNameOf('wf[0].build(1:a.b)', 'wf')).toBe('build(1:a.b)');
    expect(displayNameOf('wf.t.onExit', 'wf')).toBe('onExit');
  });

  it('makes pod names deterministic, DNS-safe and short enough', () => {
    const p = podNameFor('wf', 'wf[0].a', 'Say_Hello');
    expect(p).toBe(`wf-say-hello-${fnv1a32('wf[0].a')}`);
    const long = podNameFor('w'.repeat(80), 'w[0].a', 'tmpl');
    expect(long.length).toBeLessThanOrEqual(MAX_POD_NAME_LENGTH);
    expect(long.endsWith(`-${fnv1a32('w[0].a')}`)).toBe(true);
    expect(podNameFor('wf', 'n', undefined)).toBe(`wf-${fnv1a32('n')}`);
  });
});
