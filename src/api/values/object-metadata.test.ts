import { describe, expect, it } from 'vitest';
import { annotationProblems, labelProblems, MAX_ANNOTATIONS_BYTES, qualifiedNameProblem } from './object-metadata.js';

describe('qualifiedNameProblem', () => {
  it.each(['app', 'app.kubernetes.io/name', 'a', 'A-b_c.D', 'x/' + 'a'.repeat(63), 'a'.repeat(253) + '/n'])('accepts %s', (key) => {
    expect(qualifiedNameProblem(key)).toBeUndefined();
  });
  it.each([
    ['', 'has an empty name part'],
    ['/x', 'has an empty prefix before "/"'],
    ['a/', 'has an empty name part'],
    ['-a', 'has name part "-a"'],
    ['a b', 'has name part "a b"'],
    ['a'.repeat(64), 'has a name part longer than 63 characters'],
    ['Example.com/x', 'has prefix "Example.com"'],
    ['a_b.com/x', 'has prefix "a_b.com"'],
    ['a'.repeat(254) + '/x', 'has a prefix longer than 253 characters'],
    ['a/b/c', 'has name part "b/c"'],
  ])('refuses %s', (key, why) => {
    expect(qualifiedNameProblem(key)).toContain(why);
  });
});

describe('labelProblems', () => {
  it('accepts empty values and values of up to 63 allowed characters', () => {
    expect(labelProblems({ a: '', b: 'v1.2-3_x', c: 'a'.repeat(63) }, 'metadata.labels')).toEqual([]);
  });
  it('names the key of each bad value', () => {
    expect(labelProblems({ v: '>= v3.3', w: '-x', z: 'a'.repeat(64) }, 'm.labels').map((m) => m.split(':')[0])).toEqual([
      'm.labels["v"]',
      'm.labels["w"]',
      'm.labels["z"]',
    ]);
  });
});

describe('annotationProblems', () => {
  it('accepts any value and an upper-case prefix (checked lower-cased, as the API server does)', () => {
    expect(annotationProblems({ 'Example.COM/Note': 'free text: >= 3, "quotes"' }, 'a')).toEqual([]);
  });
  it('refuses bad keys and a total over 256 KiB', () => {
    expect(annotationProblems({ 'bad key': 'x' }, 'a')).toEqual([
      expect.stringMatching(/^a\["bad key"\]: the key has name part "bad key"/),
    ]);
    expect(annotationProblems({ big: 'x'.repeat(MAX_ANNOTATIONS_BYTES) }, 'a')).toEqual([
      `a: keys and values together take ${MAX_ANNOTATIONS_BYTES + 3} bytes, more than Kubernetes' limit of ${MAX_ANNOTATIONS_BYTES} (256 KiB)`,
    ]);
  });
});
