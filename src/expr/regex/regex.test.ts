import { describe, expect, it } from 'vitest';
import { decode, Regex, RegexSyntaxError, type RegexMeter } from './vm.js';

const free: RegexMeter = { charge: () => undefined };
const test = (pattern: string, s: string): boolean => Regex.compile(pattern, 20_000).test(s, free);
const find = (pattern: string, s: string): string[] | null => {
  const m = Regex.compile(pattern, 20_000).exec(decode(s, free), 0, free);
  if (!m) return null;
  const out: string[] = [];
  for (let i = 0; i < m.length; i += 2) out.push(m[i] < 0 ? '<unset>' : s.slice(m[i], m[i + 1]));
  return out;
};

describe('RE2-syntax regular expressions', () => {
  it.each([
    ['hea', 'heads', true],
    ['^tai', 'heads', false],
    ['imminent node shutdown|pod deleted', 'OOMKilled', false],
    ['imminent node shutdown|pod deleted', 'the pod deleted by', true],
    ['^a.c$', 'abc', true],
    ['^a.c$', 'a\nc', false],
    ['(?s)^a.c$', 'a\nc', true],
    ['^b$', 'a\nb', false],
    ['(?m)^b$', 'a\nb', true],
    ['\\d{3}-\\d{4}', 'call 555-1234', true],
    ['^[[:alpha:]_][[:word:]]*$', 'ok_1', true],
    ['^[^a-c]+$', 'xyz', true],
    ['^[^a-c]+$', 'xbz', false],
    ['(?i)^hello$', 'HeLLo', true],
    ['(?i)[^a]', 'A', false],
    ['\\bcat\\b', 'a cat!', true],
    ['\\bcat\\b', 'concat', false],
    ['^\\p{Greek}+$', 'αβγ', true],
    ['^\\PL+$', '123', true],
    ['^.$', '😀', true],
    ['a{2,3}', 'caab', true],
    ['^a{2,3}$', 'aaaa', false],
    ['\\Qa.b\\E', 'a.b', true],
    ['\\Qa.b\\E', 'axb', false],
    ['x*', '', true],
    ['^$', '', true],
    ['a\\.b', 'a.b', true],
    ['[\\]]', ']', true],
    ['\\x41\\x{1F600}', 'A😀', true],
  ])('%s on %j → %s', (pattern, input, want) => {
    expect(test(pattern, input)).toBe(want);
  });

  it('reports submatches with leftmost-first priority', () => {
    expect(find('a(b*)(c)?', 'xabbbd')).toEqual(['abbb', 'bbb', '<unset>']);
    // Leftmost-first (Perl/Go), not leftmost-longest: the first alternative that leads to a match wins.
    expect(find('(a|ab)(c|bcd)', 'abcd')).toEqual(['abcd', 'a', 'bcd']);
    expect(find('(a|ab)(c|bcd)(d*)', 'abcd')).toEqual(['abcd', 'a', 'bcd', '']);
    expect(find('a+?', 'aaa')).toEqual(['a']);
    expect(find('(?U)a+', 'aaa')).toEqual(['a']);
    expect(find('(?P<year>\\d{4})-(?<m>\\d\\d)', 'on 2024-05-01')).toEqual(['2024-05', '2024', '05']);
    expect(find('é(.)', 'café!')).toEqual(['é!', '!']);
  });

  it.each([
    ['a(b', /missing closing \)/],
    ['a)', /unexpected \)/],
    ['*a', /missing argument to repetition operator/],
    ['a**', /invalid nested repetition operator/],
    ['a{1001}', /invalid repeat count/],
    ['[a', /missing closing \]/],
    ['[z-a]', /invalid character class range/],
    ['(?=a)', /lookaround and backreferences are not supported/],
    ['\\1', /backreferences are not supported/],
    ['\\k', /invalid escape sequence/],
    ['\\p{Nope}', /unknown Unicode class/],
    ['[[:nope:]]', /invalid character class range/],
  ])('rejects %s', (pattern, message) => {
    expect(() => Regex.compile(pattern, 20_000)).toThrow(RegexSyntaxError);
    expect(() => Regex.compile(pattern, 20_000)).toThrow(message);
  });

  it('bounds the program size after expanding repeats', () => {
    expect(() => Regex.compile('(a{1000}){1000}', 20_000)).toThrow(/too large/);
  });

  it('matches catastrophic-backtracking patterns in linear time, charging the meter', () => {
    let charged = 0;
    const meter: RegexMeter = { charge: (n) => (charged += n) };
    const input = 'a'.repeat(50_000) + '!';
    const want: Record<string, boolean> = { '(a+)+$': false, '(a|a)*$': true, '(a*)*b': false, '^(a|aa)+$': false, '(.*a){20}': true };
    for (const [p, expected] of Object.entries(want)) {
      expect(Regex.compile(p, 20_000).test(input, meter), p).toBe(expected);
    }
    expect(charged).toBeGreaterThan(0);
  });

  it('lets the meter stop a long match', () => {
    const meter: RegexMeter = {
      charge: () => {
        throw new Error('budget exhausted');
      },
    };
    expect(() => Regex.compile('(x+x+)+y', 20_000).test('x'.repeat(100_000), meter)).toThrow('budget exhausted');
  });
});
