/**
 * Character classes for the regex parser: Perl classes (`\d \s \w`), POSIX classes
 * (`[[:alpha:]]`), Unicode properties (`\pL`, `\p{Greek}`) and simple case folding. Each class
 * is a predicate on one code point; Unicode properties use a single-code-point JS RegExp test,
 * which is constant-time (no backtracking is possible on one character).
 */
export type CharTest = (cp: number) => boolean;

/** A pattern that is not valid RE2 syntax; `offset` is the code point where it went wrong. */
export class RegexSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export const isWordCp = (cp: number): boolean => (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95;

export const rangeTest =
  (ranges: [number, number][]): CharTest =>
  (cp) => {
    for (const [a, b] of ranges) if (cp >= a && cp <= b) return true;
    return false;
  };

export const PERL: Record<string, [number, number][]> = {
  d: [[48, 57]],
  s: [
    [9, 10],
    [12, 13],
    [32, 32],
  ],
  w: [
    [48, 57],
    [65, 90],
    [95, 95],
    [97, 122],
  ],
};

export const POSIX: Record<string, [number, number][]> = {
  alnum: [
    [48, 57],
    [65, 90],
    [97, 122],
  ],
  alpha: [
    [65, 90],
    [97, 122],
  ],
  ascii: [[0, 127]],
  blank: [
    [9, 9],
    [32, 32],
  ],
  cntrl: [
    [0, 31],
    [127, 127],
  ],
  digit: [[48, 57]],
  graph: [[33, 126]],
  lower: [[97, 122]],
  print: [[32, 126]],
  punct: [
    [33, 47],
    [58, 64],
    [91, 96],
    [123, 126],
  ],
  space: [
    [9, 13],
    [32, 32],
  ],
  upper: [[65, 90]],
  word: PERL.w,
  xdigit: [
    [48, 57],
    [65, 70],
    [97, 102],
  ],
};

export function caseVariants(cp: number): number[] {
  const s = String.fromCodePoint(cp);
  const out = new Set<number>([cp]);
  for (const v of [s.toLowerCase(), s.toUpperCase()]) {
    const c = v.codePointAt(0);
    if (c !== undefined && String.fromCodePoint(c) === v) out.add(c);
  }
  return [...out];
}

export function foldTest(test: CharTest, fold: boolean): CharTest {
  if (!fold) return test;
  return (cp) => caseVariants(cp).some(test);
}

export function unicodeTest(name: string, offset: number): CharTest {
  if (!/^[A-Za-z_]+$/.test(name)) throw new RegexSyntaxError(`invalid character class name ${JSON.stringify(name)}`, offset);
  if (name === 'Any') return () => true;
  let re: RegExp;
  try {
    // A single-code-point property test: constant time, no backtracking possible.
    re = name.length <= 2 ? new RegExp(`^\\p{${name}}$`, 'u') : new RegExp(`^\\p{Script=${name}}$`, 'u');
  } catch {
    throw new RegexSyntaxError(`unknown Unicode class \\p{${name}}`, offset);
  }
  return (cp) => re.test(String.fromCodePoint(cp));
}
