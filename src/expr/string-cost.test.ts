import { describe, expect, it } from 'vitest';
import { measureExpression } from '../../test/fuzz/expr-hostile.js';
import { compile } from './compile.js';
import { ExprError } from './errors.js';

/**
 * String builtins that used to do per-match JavaScript work (a regex replace with a callback per
 * word, control character or template reference) on inputs of up to 1 MiB: each, on its worst
 * input, ends with a value or a limit ExprError. The precise bound (250 ms of CPU, these run in
 * 10-50 ms) is the fuzz target's; the one asserted here is generous, as the unit project runs
 * files in parallel on a shared machine. The figures are printed so they can be read in the log.
 */

const SANE_CPU_MS = 1000;
const MIB = 1 << 20;

const env: Record<string, unknown> = {
  WORDS: 'a '.repeat(MIB / 2), // 524,288 one-letter words
  DOTTED: 'a.'.repeat(MIB / 2),
  ACCENTED: 'é '.repeat(MIB / 2), // non-ASCII letters, each upper-cased
  ASTRAL: '\u{1D41A} '.repeat(Math.floor(MIB / 3)), // letters outside the BMP
  DISTINCT: Array.from({ length: 340_000 }, (_, i) => String.fromCodePoint(0x10000 + i * 3)).join(' '), // every code point new
  SHARP: 'ß '.repeat(MIB / 2), // upper-cases to SS: the result outgrows the limit
  ONE_WORD: 'ab'.repeat(MIB / 2),
  C1: '\u0080'.repeat(MIB), // quoted as \x80: fourfold
  C1_FITS: '\u0080'.repeat(MIB / 4 - 4),
  CONTROLS: '\u0001'.repeat(MIB),
  METAS: '.'.repeat(MIB),
  METAS_FIT: '.'.repeat(MIB / 2),
};

const WORST: readonly string[] = [
  'sprig.title(WORDS)',
  'sprig.title(DOTTED)',
  'sprig.title(ACCENTED)',
  'sprig.title(ASTRAL)',
  'sprig.title(DISTINCT)',
  'sprig.title(SHARP)',
  'count(0..1999, len(sprig.title(WORDS)) > 0) > 0',
  'count(0..1999, len(sprig.title(ACCENTED)) > 0) > 0',
  'count(0..1999, len(sprig.title(ONE_WORD)) > 0) > 0',
  'sprig.quote(C1)',
  'sprig.quote(CONTROLS)',
  'sprig.quote(C1_FITS)',
  'count(0..1999, len(sprig.quote(C1_FITS)) > 0) > 0',
  'sprig.regexQuoteMeta(METAS)',
  'sprig.regexQuoteMeta(METAS_FIT)',
  'count(0..1999, len(sprig.regexQuoteMeta(METAS_FIT)) > 0) > 0',
  // A template of 500,000 references was re-read for every match: minutes for 1,000 matches.
  'sprig.regexReplaceAll("a", "a", repeat("$9", 500000))',
  'sprig.regexReplaceAll("a", repeat("a", 1000), repeat("$9", 500000))',
  'sprig.regexReplaceAll("a", repeat("a", 1000), repeat("${9}", 200000))',
  'sprig.regexReplaceAll("(a)", repeat("a", 1000000), "$1$1$9")',
  'sprig.regexReplaceAll("a", "a", repeat("$", 1000000))',
  'sprig.regexReplaceAll("a", "a", repeat("${a", 300000))',
];

describe('string builtins on their worst 1 MiB inputs', () => {
  for (const source of WORST) {
    it(source, () => {
      const sample = measureExpression(source, env);
      console.log(`${source}: ${sample.cpuMs.toFixed(1)} ms of CPU, ${sample.outcome}${sample.message ? ` (${sample.message})` : ''}`);
      if (sample.outcome !== 'value') {
        expect(sample.error, `${source}: ${sample.message}`).toBeInstanceOf(ExprError);
        expect((sample.error as ExprError).code, sample.message).toBe('limit');
      }
      expect(sample.cpuMs, `${source} took ${sample.cpuMs} ms of CPU`).toBeLessThan(SANE_CPU_MS);
    });
  }
});

const ev = (src: string, vars: Record<string, unknown> = {}): unknown => compile(src).evaluate(vars);

describe('the faster string builtins keep their results', () => {
  it('sprig.title upper-cases the first letter of every word', () => {
    const cases: Array<[string, string]> = [
      ['hello world', 'Hello World'],
      ["don't stop_me now-2day x1y 9lives", "Don't Stop_me Now-2day X1y 9lives"],
      ['élan vital · ünïcode', 'Élan Vital · Ünïcode'],
      ['straße ßig ǆungla ŉ', 'Straße SSig Ǆungla ʼN'],
      ['𝐚b 𐐨ord', '𝐚b 𐐀ord'],
      ['\u0300a a\u0300b', '\u0300A A\u0300B'],
      ['\ud800a \udc00b', '\ud800A \udc00B'],
      ['ALREADY Up', 'ALREADY Up'],
      ['', ''],
      ['a', 'A'],
    ];
    for (const [s, want] of cases) expect(ev('sprig.title(s)', { s }), JSON.stringify(s)).toBe(want);
  });

  it('sprig.title on 1 MiB of words returns the whole string, upper-cased', () => {
    expect(ev('sprig.title(s)', { s: 'a '.repeat(MIB / 2) })).toBe('A '.repeat(MIB / 2));
    expect(ev('sprig.title(s)', { s: 'é.'.repeat(MIB / 2) })).toBe('É.'.repeat(MIB / 2));
  });

  it('sprig.quote escapes DEL and the C1 controls as Go does', () => {
    expect(ev('sprig.quote(s)', { s: 'a\u007f\u0080\u009f\u00a0"\\\n' })).toBe('"a\\x7f\\x80\\x9f\u00a0\\"\\\\\\n"');
    expect(ev('sprig.quote("a", nil, 1)')).toBe('"a" "1"');
    expect((ev('sprig.quote(s)', { s: '\u0085'.repeat(1000) }) as string).length).toBe(4002);
  });

  it('sprig.regexQuoteMeta escapes the metacharacters', () => {
    expect(ev('sprig.regexQuoteMeta(s)', { s: 'a.b*c\\d(e)[f]{g}^h$i|j?k+l é' })).toBe(
      'a\\.b\\*c\\\\d\\(e\\)\\[f\\]\\{g\\}\\^h\\$i\\|j\\?k\\+l é',
    );
    expect(ev('sprig.regexQuoteMeta("plain")')).toBe('plain');
  });

  it('sprig.regexReplaceAll expands $n, ${n}, $name, ${name} and $$ as before', () => {
    const re = '(?P<first>a)(b)?';
    const cases: Array<[string, string, string]> = [
      ['ab-a', '<$1|$2|${first}|$first>', '<a|b|a|a>-<a||a|a>'],
      ['ab', '$$1 $$$1 $', '$1 $a $'],
      ['ab', '${1}x $1x ${first}x', 'ax  ax'],
      ['ab', '${ ${1 ${} $-', '${ ${1 ${} $-'],
      ['ab', '$0 $01 $3 $99999999999999999999 $nope', 'ab a   '],
      ['xx', '$1', 'xx'],
    ];
    for (const [s, t, want] of cases) expect(ev('sprig.regexReplaceAll(re, s, t)', { re, s, t }), t).toBe(want);
    expect(ev('sprig.regexReplaceAllLiteral("a", "aba", "$1")')).toBe('$1b$1');
  });
});
