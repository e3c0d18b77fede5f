/**
 * `withSequence`: numbers from `start` to `end` (inclusive, counting down when end < start), or
 * `count` numbers from `start`, each printed through a printf-style `format` (default `%d`).
 *
 * The fields arrive already substituted (they may have been `{{inputs.parameters.n}}`), so they are
 * strings or numbers here; anything that is not an integer is an error naming the field.
 */
import type { Sequence } from '../api/index.js';

/**
 * Most items a loop may expand to unless the controller says otherwise (`--max-loop-items`):
 * beyond a guard a typo (`count: 1e9`) would exhaust the controller's memory. 100,000 is what one
 * controller carries with the node status offloaded (bench/huge-workflow-bench.ts).
 */
export const DEFAULT_MAX_LOOP_ITEMS = 100_000;

export class SequenceError extends Error {}

/** The items of a sequence, as strings (items of a sequence are always strings). */
export function expandSequence(seq: Sequence, maxItems = DEFAULT_MAX_LOOP_ITEMS): string[] {
  const start = seq.start === undefined || seq.start === '' ? 0 : toInt(seq.start, 'start');
  const hasCount = seq.count !== undefined && seq.count !== '';
  const hasEnd = seq.end !== undefined && seq.end !== '';
  if (hasCount && hasEnd) throw new SequenceError('only one of count or end can be given');
  if (!hasCount && !hasEnd) throw new SequenceError('one of count or end is required');
  const numbers: number[] = [];
  if (hasCount) {
    const count = toInt(seq.count!, 'count');
    if (count < 0) throw new SequenceError(`count must not be negative, got ${count}`);
    checkLength(count, maxItems);
    for (let i = 0; i < count; i++) numbers.push(start + i);
  } else {
    const end = toInt(seq.end!, 'end');
    checkLength(Math.abs(end - start) + 1, maxItems);
    const step = end >= start ? 1 : -1;
    for (let n = start; ; n += step) {
      numbers.push(n);
      if (n === end) break;
    }
  }
  const format = seq.format ?? '%d';
  return numbers.map((n) => formatNumber(format, n));
}

function checkLength(n: number, maxItems: number): void {
  if (n > maxItems) throw new SequenceError(tooManyItems(n, maxItems));
}

/** The message of a loop over the guard, with what to change. */
export function tooManyItems(n: number, maxItems: number): string {
  return `expands to ${n} items, more than the limit of ${maxItems} (the controller's --max-loop-items)`;
}

function toInt(value: string | number, field: string): number {
  const n = typeof value === 'number' ? value : /^\s*[-+]?\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new SequenceError(`${field}: ${JSON.stringify(value)} is not an integer`);
  return n;
}

/**
 * A small printf: literal text plus `%%` and one integer verb among `d`, `x`, `X`, `o`, `s`, `v`,
 * with optional `-`/`0` flags and a width (`%03d`, `%-4d`, `%x`).
 */
export function formatNumber(format: string, n: number): string {
  let out = '';
  let verbs = 0;
  const re = /%(%|([-0]*)(\d*)([dxXosv]))/g;
  let last = 0;
  for (let m = re.exec(format); m !== null; m = re.exec(format)) {
    out += format.slice(last, m.index);
    last = re.lastIndex;
    if (m[1] === '%') {
      out += '%';
      continue;
    }
    verbs++;
    out += pad(render(n, m[4]!), m[2] ?? '', m[3] ? Number(m[3]) : 0);
  }
  out += format.slice(last);
  if (verbs !== 1 || /%(?!%)/.test(format.replace(re, ''))) {
    throw new SequenceError(`format ${JSON.stringify(format)} must contain exactly one of %d %x %X %o %s %v`);
  }
  return out;
}

function render(n: number, verb: string): string {
  const abs = Math.abs(n);
  const sign = n < 0 ? '-' : '';
  switch (verb) {
    case 'x':
      return sign + abs.toString(16);
    case 'X':
      return sign + abs.toString(16).toUpperCase();
    case 'o':
      return sign + abs.toString(8);
    default:
      return String(n);
  }
}

function pad(text: string, flags: string, width: number): string {
  if (text.length >= width) return text;
  if (flags.includes('-')) return text.padEnd(width, ' ');
  if (flags.includes('0')) {
    const negative = text.startsWith('-');
    const digits = negative ? text.slice(1) : text;
    return (negative ? '-' : '') + digits.padStart(width - (negative ? 1 : 0), '0');
  }
  return text.padStart(width, ' ');
}
