/** The text functions of sprig.ts that need tables of their own: title case and regexQuoteMeta. */
import type { EvalContext } from './context.js';
import { charSteps } from './cost.js';

/** The characters regexQuoteMeta escapes (Go's regexp.QuoteMeta). */
export const QUOTE_META = Uint8Array.from({ length: 128 }, (_, u) => Number('\\.+*?()|[]{}^$'.includes(String.fromCharCode(u))));
export const HEX = Uint16Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));
export const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** The string of the first `n` UTF-16 code units of `units` (lone surrogates kept as they are). */
export function fromUnits(units: Uint16Array, n: number): string {
  if (LITTLE_ENDIAN) return Buffer.from(units.buffer, units.byteOffset, n * 2).toString('utf16le');
  let out = '';
  for (let i = 0; i < n; i += 8192) out += String.fromCharCode(...units.subarray(i, Math.min(n, i + 8192)));
  return out;
}

/** The characters `title` tells apart: word separators, word characters, letters (ASCII by table). */
export const SEPARATOR = 1;
export const WORD = 2;
export const LETTER = 3; // a letter that upper-cases to itself
export const CASED = 4; // a letter with an upper case of its own
export const ASCII_KIND = Uint8Array.from({ length: 128 }, (_, u) =>
  u >= 0x61 && u <= 0x7a
    ? CASED
    : u >= 0x41 && u <= 0x5a
      ? LETTER
      : (u >= 0x30 && u <= 0x39) || u === 0x5f || u === 0x27
        ? WORD
        : SEPARATOR,
);
export const IS_LETTER = /\p{L}/uy;
export const IS_WORD = /[\p{N}_']/uy;
/** Kinds of the code points met so far (0: not yet classified), and upper cases of the cased ones. */
let kinds: Uint8Array | undefined;
export const uppers = new Map<number, string>();

export function kindAt(s: string, i: number, cp: number): number {
  kinds ??= new Uint8Array(0x110000);
  let kind = kinds[cp];
  if (kind !== 0) return kind;
  IS_LETTER.lastIndex = i;
  IS_WORD.lastIndex = i;
  if (IS_LETTER.test(s)) {
    const ch = String.fromCodePoint(cp);
    const up = ch.toUpperCase();
    kind = up === ch ? LETTER : CASED;
    if (kind === CASED) uppers.set(cp, up);
  } else kind = IS_WORD.test(s) ? WORD : SEPARATOR;
  kinds[cp] = kind;
  return kind;
}

/** Steps per 16 UTF-16 code units that `title` charges before it starts (see title). */
export const TITLE_STEPS = 1;
/** Steps per non-ASCII code point, charged per block of them as the scan meets them. */
export const NON_ASCII_BLOCK = 4096;
export const NON_ASCII_BLOCK_STEPS = 2048;

/**
 * Sprig's title: every letter that starts a word is upper-cased, a word being a run of letters,
 * digits, `_` and `'` (what `/(^|[^\p{L}\p{N}_'])(\p{L})/u` finds, with String#toUpperCase).
 *
 * One pass over the code units into a buffer of code units: no callback, no string per word. A
 * regex replace with a callback per word took 150-300 ms of CPU on 1 MiB of one-letter words
 * (V8 finds every match before the first callback, so charging in the callback came too late).
 * The scan costs under 10 ns per ASCII code unit and up to 50 ns per non-ASCII code point: it
 * charges one more read of the string up front, and 1 step per 2 non-ASCII code points as it goes
 * (1 MiB of one-letter words: 8-13 ms of CPU for about 200,000 steps, 450,000 when not ASCII).
 */
export function title(c: EvalContext, s: string): string {
  c.charge(charSteps(s.length) * TITLE_STEPS);
  let out: Uint16Array | undefined; // allocated at the first change
  let j = 0; // code units written to `out`
  let inWord = false;
  let nonAscii = 0;
  for (let i = 0; i < s.length;) {
    const u = s.charCodeAt(i);
    let kind: number;
    let width = 1;
    let cp = u;
    if (u < 0x80) kind = ASCII_KIND[u];
    else {
      cp = s.codePointAt(i) as number;
      if (cp > 0xffff) width = 2;
      kind = kindAt(s, i, cp);
      if (++nonAscii === NON_ASCII_BLOCK) {
        c.charge(NON_ASCII_BLOCK_STEPS);
        nonAscii = 0;
      }
    }
    if (kind === CASED && !inWord) {
      const up = u < 0x80 ? undefined : (uppers.get(cp) as string);
      const grow = up === undefined ? 0 : up.length - width;
      if (!out) {
        out = new Uint16Array(s.length + Math.max(grow, 0) + 16);
        for (let k = 0; k < i; k++) out[k] = s.charCodeAt(k);
        j = i;
      } else if (j + (s.length - i) + grow > out.length) {
        // An upper case longer than its letter (ß is SS): the result may not outgrow the limit.
        if (j + (s.length - i) + grow > c.maxStringLength)
          c.limit(`sprig.title would build a string longer than ${c.maxStringLength} characters`);
        const bigger = new Uint16Array(Math.min(Math.max(out.length * 2, j + (s.length - i) + grow), c.maxStringLength + 16));
        bigger.set(out.subarray(0, j));
        out = bigger;
      }
      if (up === undefined) out[j++] = u - 0x20;
      else for (let k = 0; k < up.length; k++) out[j++] = up.charCodeAt(k);
    } else if (out) {
      out[j++] = u;
      if (width === 2) out[j++] = s.charCodeAt(i + 1);
    }
    inWord = kind !== SEPARATOR;
    i += width;
  }
  return out ? fromUnits(out, j) : s;
}
