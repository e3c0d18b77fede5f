import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goFloatKey, resolvePlain } from './go-scalars.js';
import { kubectlMissing, kubectlRead } from './kubectl-oracle.js';
import { MAX_YAML_DEPTH, readYamlDocument, readYamlDocuments, YamlReadError } from './kube-yaml.js';

const CORPUS = join(import.meta.dirname, '..', '..', 'test', 'yaml-corpus');
const files = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const read = (file: string) => readYamlDocuments(readFileSync(join(CORPUS, file), 'utf8'), file);

describe('the YAML corpus, against what kubectl made of it (recorded by hack/yaml-corpus.ts)', () => {
  it('covers every file', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const f of files) {
      const base = join(CORPUS, f.replace(/\.yaml$/, ''));
      expect(existsSync(`${base}.json`) !== existsSync(`${base}.refused`), `${f} has exactly one record`).toBe(true);
    }
  });
  for (const file of files) {
    const base = join(CORPUS, file.replace(/\.yaml$/, ''));
    it(file, () => {
      if (existsSync(`${base}.json`)) expect(read(file)).toEqual(JSON.parse(readFileSync(`${base}.json`, 'utf8')));
      else expect(() => read(file)).toThrow(YamlReadError);
    });
  }
});

const missing = kubectlMissing();
if (missing) console.log(`skipping the live kubectl comparison of the YAML corpus: ${missing}`);
describe.skipIf(missing !== undefined)('the YAML corpus, against kubectl run now', () => {
  for (const file of files) {
    it(file, () => {
      const k = kubectlRead(join(CORPUS, file));
      if (k.ok) expect(read(file)).toEqual(k.docs);
      else expect(() => read(file), `kubectl refuses it: ${k.error}`).toThrow(YamlReadError);
    });
  }
});

describe('readYamlDocuments', () => {
  it('reads a multi-line double-quoted scalar in a flow sequence closed at the key indentation', () => {
    const [doc] = readYamlDocuments('args: ["\n  echo a &&\n  echo b\n"]\nnext: 1\n', 'x.yaml');
    expect(doc).toEqual({ args: [' echo a && echo b '], next: 1 });
  });

  it('keeps the last of duplicate keys and reads 1.1 booleans and octal', () => {
    expect(readYamlDocuments('a: 1\na: 2\nb: yes\nc: 0755\nd: "0755"\n', 'x')).toEqual([{ a: 2, b: true, c: 493, d: '0755' }]);
  });

  it('copies aliases, so changing one use does not change another', () => {
    const [doc] = readYamlDocuments('a: &x {k: [1]}\nb: *x\n', 'x') as [{ a: { k: number[] }; b: { k: number[] } }];
    doc.b.k.push(2);
    expect(doc.a.k).toEqual([1]);
  });

  it('keeps __proto__ as an own key and never touches a prototype', () => {
    const [doc] = readYamlDocuments('__proto__: {polluted: true}\nm:\n  <<: {__proto__: {polluted: true}}\n', 'x') as [
      Record<string, unknown>,
    ];
    expect(Object.keys(doc)).toContain('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
    expect(Object.keys(doc.m as object)).toEqual(['__proto__']);
  });

  it('refuses a billion-laughs document quickly', () => {
    const levels = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 12; i++)
      levels.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const t0 = Date.now();
    expect(() => readYamlDocuments(levels.join('\n'), 'laughs.yaml')).toThrow(/excessive aliasing/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('refuses merge chains that would copy keys without bound, by the same rule', () => {
    const lines = ['m0: &m0 {k0: 0}'];
    for (let i = 1; i < 3000; i++) lines.push(`m${i}: &m${i} {<<: *m${i - 1}, k${i}: ${i}}`);
    expect(() => readYamlDocuments(lines.join('\n'), 'chain.yaml')).toThrow(/excessive aliasing/);
  });

  it('accepts nesting up to its limit and refuses deeper nesting with a message', () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(readYamlDocuments(nest(MAX_YAML_DEPTH - 1), 'deep')).toHaveLength(1);
    expect(() => readYamlDocuments(nest(MAX_YAML_DEPTH + 5), 'deep')).toThrow(YamlReadError);
  });

  it('names the source, line and column of a syntax error', () => {
    const err = (() => {
      try {
        readYamlDocuments('a: 1\nb: [1, 2\n', 'wf.yaml');
      } catch (e) {
        return e as YamlReadError;
      }
    })();
    expect(err).toBeInstanceOf(YamlReadError);
    expect(err!.message).toMatch(/^wf\.yaml: line \d+, column \d+: /);
  });

  it('refuses integers it cannot keep exactly, naming the line', () => {
    expect(() => readYamlDocuments('a: 1\nb: 12345678901234567890\n', 'big.yaml')).toThrow(
      /big\.yaml: line 2: the integer 12345678901234567890/,
    );
    expect(readYamlDocuments('b: "12345678901234567890"\n', 'big.yaml')).toEqual([{ b: '12345678901234567890' }]);
  });

  it('skips empty documents; readYamlDocument refuses several', () => {
    expect(readYamlDocuments('---\n---\n# nothing\n---\na: 1\n...\n', 'x')).toEqual([{ a: 1 }]);
    expect(readYamlDocument('', 'x')).toBeUndefined();
    expect(() => readYamlDocument('a: 1\n---\nb: 2\n', 'p.yaml', { what: 'one plugin' })).toThrow(
      /p\.yaml: holds 2 YAML documents .* where one plugin is expected/,
    );
  });

  it('with uniqueKeys, refuses a key given twice, naming the line', () => {
    expect(() => readYamlDocuments('a: 1\nb:\n  c: 1\n  c: 2\n', 'p.yaml', { uniqueKeys: true })).toThrow(
      /p\.yaml: line 4, column \d+: duplicated mapping key/,
    );
    expect(readYamlDocuments('base: &b {x: 1}\nm: {<<: *b, x: 2}\n', 'p.yaml', { uniqueKeys: true })).toEqual([
      { base: { x: 1 }, m: { x: 2 } },
    ]);
  });
});

describe('go-yaml scalar resolution', () => {
  it.each([
    ['y', true],
    ['Off', false],
    ['~', null],
    ['0755', 493],
    ['08', 8],
    ['0x1F', 31],
    ['1_000', 1000],
    ['1e3', 1000],
    ['.5', 0.5],
  ])('%s', (text, want) => {
    const r = resolvePlain(text);
    const got = r.t === 'null' ? null : r.t === 'str' ? text : r.t === 'int' ? Number(r.v) : r.v;
    expect(got).toBe(want);
  });
  it.each(['.', '1e400', '1.2.3', '2001-12-14', '12:30', 'yess', '0x', '0b2'])('%s stays a string', (text) => {
    expect(resolvePlain(text).t).toBe('str');
  });
  it.each([
    [1e6, '1e+06'],
    [123456, '123456'],
    [1.5, '1.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [0.1, '0.1'],
    [-2.5e-7, '-2.5e-07'],
  ])('float key %s is spelled %s', (f, want) => {
    expect(goFloatKey(f)).toBe(want);
  });
});

describe('readYamlDocuments on mutated corpus files (seeded)', () => {
  it('returns plain JSON values or throws YamlReadError, never anything else, and leaves prototypes alone', () => {
    let seed = 20261123;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const pieces = [
      '\n',
      ' ',
      '  ',
      ':',
      '- ',
      '[',
      ']',
      '{',
      '}',
      ',',
      '"',
      "'",
      '&a ',
      '*a',
      '<<: ',
      '---\n',
      '...\n',
      '!!int ',
      '!x ',
      '? ',
      '|\n',
      '#',
      '\t',
      'yes',
      '0x',
      '__proto__: ',
      '~',
    ];
    const sources = files.map((f) => readFileSync(join(CORPUS, f), 'utf8'));
    let read = 0;
    let refused = 0;
    for (let i = 0; i < 600; i++) {
      let text = sources[rand(sources.length)]!;
      for (let m = 0, n = 1 + rand(4); m < n; m++) {
        const at = rand(text.length + 1);
        const op = rand(3);
        if (op === 0) text = text.slice(0, at) + pieces[rand(pieces.length)] + text.slice(at);
        else if (op === 1) text = text.slice(0, at) + text.slice(at + 1 + rand(8));
        else text = text.slice(0, at) + text.slice(rand(text.length), rand(text.length)) + text.slice(at);
      }
      try {
        const docs = readYamlDocuments(text, 'mutated.yaml');
        expect(JSON.parse(JSON.stringify(docs))).toEqual(docs);
        read++;
      } catch (err) {
        if (!(err instanceof YamlReadError)) throw new Error(`not a YamlReadError for input ${JSON.stringify(text)}: ${String(err)}`);
        expect(err.message.startsWith('mutated.yaml: ')).toBe(true);
        refused++;
      }
    }
    expect(({} as Record<string, unknown>).a).toBeUndefined();
    expect(read).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(50);
  });
});
