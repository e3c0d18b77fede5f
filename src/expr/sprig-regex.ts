/** The regex functions of sprig.ts: Go's FindAll, and ReplaceAll with its `$1`/`${name}` template. */
import { regexFor, str } from './builtins-support.js';
import type { EvalContext } from './context.js';
import { cpIndex, decode, type DecodedInput, type Regex } from './regex/vm.js';
import type { Value } from './values.js';

/** All leftmost-first matches, Go style: an empty match right after a match is skipped. */
export function findAll(c: EvalContext, re: Regex, input: DecodedInput, limit: number): Int32Array[] {
  const out: Int32Array[] = [];
  let pos = 0;
  let prevEnd = -1;
  while (pos <= input.cps.length && (limit < 0 || out.length < limit)) {
    const m = re.exec(input, pos, c);
    if (!m) break;
    const endCp = cpIndex(input, m[1]);
    let accept = true;
    if (m[0] === m[1]) {
      if (m[0] === prevEnd) accept = false;
      pos = endCp + 1;
    } else pos = endCp;
    prevEnd = m[1];
    if (accept) out.push(m);
    c.charge(16); // each match is a run of the VM of its own
    c.alloc(96 + m.length * 4);
  }
  return out;
}

/**
 * A replacement template of regexReplaceAll (Go's Regexp.Expand: `$1`, `${1}`, `$name`,
 * `${name}`, `$$`), parsed once: literal text, and group numbers (-1: a name that is no group).
 * A `$` that starts none of these is literal. Parsed by a scan, not a regex replace with a
 * callback per reference: expanding per match used to re-read the whole template per match, so a
 * template of 500,000 references took 200 ms per match and 1,000 matches several minutes.
 */
export function parseTemplate(c: EvalContext, template: string, names: string[]): Array<string | number> {
  const parts: Array<string | number> = [];
  const groups = new Map<string, number>();
  let literal = '';
  let from = 0; // start of the literal text not yet added to `literal`
  for (let i = template.indexOf('$'); i >= 0; i = template.indexOf('$', i)) {
    let name = '';
    let end = i + 1;
    if (template.charCodeAt(i + 1) === 0x24) {
      literal += template.slice(from, i + 1); // $$ is $
      from = end = i + 2;
      i = end;
      continue;
    }
    if (template.charCodeAt(i + 1) === 0x7b) {
      let k = i + 2;
      while (k < template.length && isNameUnit(template.charCodeAt(k))) k++;
      if (k > i + 2 && template.charCodeAt(k) === 0x7d) {
        name = template.slice(i + 2, k);
        end = k + 1;
      }
    } else {
      let k = i + 1;
      while (k < template.length && isNameUnit(template.charCodeAt(k))) k++;
      name = template.slice(i + 1, k);
      end = k;
    }
    if (name === '') {
      i++; // a lone $ is literal
      continue;
    }
    let idx = groups.get(name);
    if (idx === undefined) {
      idx = /^\d+$/.test(name) ? Number(name) : names.indexOf(name);
      groups.set(name, idx);
    }
    literal += template.slice(from, i);
    if (literal) parts.push(literal);
    literal = '';
    parts.push(idx);
    from = i = end;
  }
  literal += template.slice(from);
  if (literal) parts.push(literal);
  c.charge(parts.length);
  return parts;
}

export function isNameUnit(u: number): boolean {
  return (u >= 0x30 && u <= 0x39) || (u >= 0x41 && u <= 0x5a) || (u >= 0x61 && u <= 0x7a) || u === 0x5f;
}

/** A parsed template expanded for one match; charged one step per part. */
export function expand(c: EvalContext, parts: Array<string | number>, text: string, m: Int32Array): string {
  c.charge(parts.length);
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part >= 0 && part * 2 + 1 < m.length && m[part * 2] >= 0) out += text.slice(m[part * 2], m[part * 2 + 1]);
  }
  return out;
}

export function replaceAll(c: EvalContext, args: Value[], fn: string, literal: boolean): string {
  const re = regexFor(c, str(c, fn, args, 0));
  const s = str(c, fn, args, 1);
  const repl = str(c, fn, args, 2);
  const input = decode(s, c);
  const parts = literal ? [repl] : parseTemplate(c, repl, re.groupNames);
  let out = '';
  let last = 0;
  for (const m of findAll(c, re, input, -1)) {
    out += s.slice(last, m[0]) + (literal ? repl : expand(c, parts, s, m));
    c.checkString(out);
    last = m[1];
  }
  return c.checkString(out + s.slice(last));
}
