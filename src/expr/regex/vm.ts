import { isWordCp, parseRegex, RegexSyntaxError, type CharTest, type Re } from './syntax.js';

/**
 * A Pike VM for RE2-syntax regular expressions: all alternatives advance together over the
 * input, so matching takes time proportional to input length × program size and never
 * backtracks. Leftmost-first submatch semantics (as Go's regexp) for find and replace.
 */

const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const SAVE = 3;
const ASSERT = 4;
const MATCH = 5;

type AssertKind = 'bol' | 'eol' | 'bot' | 'eot' | 'word' | 'nonword';

interface Inst {
  op: number;
  next: number;
  alt: number;
  test?: CharTest;
  kind?: AssertKind;
}

/** Charges matching work against the caller's budget. */
export interface RegexMeter {
  charge(steps: number): void;
}

export { RegexSyntaxError };

export class Regex {
  private constructor(
    private readonly prog: Inst[],
    readonly groupCount: number,
    readonly groupNames: string[],
    readonly source: string,
  ) {}

  /** Number of instructions of the compiled program (what compiling it cost). */
  get size(): number {
    return this.prog.length;
  }

  static compile(pattern: string, maxProgram: number): Regex {
    const parsed = parseRegex(pattern);
    const prog: Inst[] = [];
    const push = (inst: Inst): number => {
      if (prog.length >= maxProgram) {
        throw new RegexSyntaxError(`regular expression is too large (more than ${maxProgram} instructions after expanding repeats)`, 0);
      }
      prog.push(inst);
      return prog.length - 1;
    };
    push({ op: SAVE, next: 1, alt: 0 });
    emit(parsed.re, prog, push);
    push({ op: SAVE, next: prog.length + 1, alt: 1 });
    push({ op: MATCH, next: 0, alt: 0 });
    return new Regex(prog, parsed.groupCount, parsed.groupNames, pattern);
  }

  /** Whether the pattern matches anywhere in `s` (Go's MatchString). */
  test(s: string, meter: RegexMeter): boolean {
    const input = decode(s, meter);
    return this.run(input, 0, meter, true) !== null;
  }

  /**
   * Leftmost-first match at or after code point `from`: capture offsets as UTF-16 indexes into
   * `s` (pairs; -1 for a group that did not take part), or null.
   */
  exec(input: DecodedInput, from: number, meter: RegexMeter): Int32Array | null {
    return this.run(input, from, meter, false);
  }

  private run(input: DecodedInput, start: number, meter: RegexMeter, boolOnly: boolean): Int32Array | null {
    const prog = this.prog;
    const { cps } = input;
    const n = cps.length;
    const ncap = (this.groupCount + 1) * 2;
    const marks = new Int32Array(prog.length).fill(-1);
    let gen = 0;
    let matched: Int32Array | null = null;
    // Setting up a run touches the whole program; a SAVE allocates and copies every capture slot:
    // a step per slot (measured: at half a step, a 16-group pattern built per item of a loop used
    // 180–290 ms of CPU for the 1M-step budget, over the 250 ms bound; at one, 80–115 ms).
    let work = prog.length >> 1;
    const saveWork = ncap;
    const stack: { pc: number; caps: Int32Array }[] = [];

    const assertHolds = (kind: AssertKind, pos: number): boolean => {
      switch (kind) {
        case 'bot':
          return pos === 0;
        case 'eot':
          return pos === n;
        case 'bol':
          return pos === 0 || cps[pos - 1] === 10;
        case 'eol':
          return pos === n || cps[pos] === 10;
        default: {
          const before = pos > 0 && isWordCp(cps[pos - 1]);
          const after = pos < n && isWordCp(cps[pos]);
          return kind === 'word' ? before !== after : before === after;
        }
      }
    };

    // Follows jumps, splits, saves and assertions from `pc`, adding the threads that wait on a
    // character (or match) to `list` in priority order. Returns true on a match in boolOnly mode.
    const add = (list: { pc: number; caps: Int32Array }[], pc0: number, caps0: Int32Array, pos: number): boolean => {
      stack.push({ pc: pc0, caps: caps0 });
      while (stack.length > 0) {
        const { pc, caps } = stack.pop() as { pc: number; caps: Int32Array };
        if (marks[pc] === gen) continue;
        marks[pc] = gen;
        work++;
        const inst = prog[pc];
        switch (inst.op) {
          case JMP:
            stack.push({ pc: inst.next, caps });
            break;
          case SPLIT:
            stack.push({ pc: inst.alt, caps });
            stack.push({ pc: inst.next, caps });
            break;
          case SAVE: {
            work += saveWork;
            const copy = caps.slice();
            copy[inst.alt] = pos;
            stack.push({ pc: inst.next, caps: copy });
            break;
          }
          case ASSERT:
            if (assertHolds(inst.kind as AssertKind, pos)) stack.push({ pc: inst.next, caps });
            break;
          case MATCH:
            if (boolOnly) {
              stack.length = 0;
              return true;
            }
            list.push({ pc, caps });
            break;
          default:
            list.push({ pc, caps });
        }
      }
      return false;
    };

    let clist: { pc: number; caps: Int32Array }[] = [];
    const fresh = new Int32Array(ncap).fill(-1);
    if (add(clist, 0, fresh, start)) return fresh;
    for (let pos = start; ; pos++) {
      gen++;
      const nlist: { pc: number; caps: Int32Array }[] = [];
      for (let i = 0; i < clist.length; i++) {
        const t = clist[i];
        const inst = prog[t.pc];
        if (inst.op === MATCH) {
          matched = t.caps;
          break; // lower-priority threads cannot win any more
        }
        if (pos < n && (inst.test as CharTest)(cps[pos])) {
          if (add(nlist, inst.next, t.caps, pos + 1)) return fresh;
        }
      }
      work += clist.length + 1;
      if (work >= 4096) {
        meter.charge(work >> 2);
        work = 0;
      }
      if (pos >= n) break;
      if (matched === null && add(nlist, 0, fresh, pos + 1)) return fresh;
      if (nlist.length === 0 && matched !== null) break;
      clist = nlist;
    }
    if (work > 0) meter.charge(work >> 2);
    if (matched === null) return null;
    const out = new Int32Array(ncap);
    for (let i = 0; i < ncap; i++) out[i] = matched[i] < 0 ? -1 : input.offs[matched[i]];
    return out;
  }
}

export interface DecodedInput {
  text: string;
  cps: Int32Array;
  /** UTF-16 offset of each code point, plus the text length at the end. */
  offs: Int32Array;
}

/** The code points of `text`, charged to `meter` (about one step per 4 characters: decoding is most of the cost of matching a long text). */
export function decode(text: string, meter: RegexMeter): DecodedInput {
  meter.charge(text.length >> 2);
  const cps = new Int32Array(text.length);
  const offs = new Int32Array(text.length + 1);
  let n = 0;
  for (let i = 0; i < text.length; n++) {
    const cp = text.codePointAt(i) as number;
    cps[n] = cp;
    offs[n] = i;
    i += cp > 0xffff ? 2 : 1;
  }
  offs[n] = text.length;
  return { text, cps: n === text.length ? cps : cps.subarray(0, n), offs: n === text.length ? offs : offs.subarray(0, n + 1) };
}

/** Code point index of a UTF-16 offset (offsets always fall on code point starts here). */
export function cpIndex(input: DecodedInput, offset: number): number {
  let lo = 0;
  let hi = input.offs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (input.offs[mid] < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function emit(re: Re, prog: Inst[], push: (i: Inst) => number): void {
  switch (re.t) {
    case 'empty':
      return;
    case 'char':
      push({ op: CHAR, next: prog.length + 1, alt: 0, test: re.test });
      return;
    case 'assert':
      push({ op: ASSERT, next: prog.length + 1, alt: 0, kind: re.kind });
      return;
    case 'cat':
      for (const item of re.items) emit(item, prog, push);
      return;
    case 'group':
      push({ op: SAVE, next: prog.length + 1, alt: re.index * 2 });
      emit(re.item, prog, push);
      push({ op: SAVE, next: prog.length + 1, alt: re.index * 2 + 1 });
      return;
    case 'alt': {
      const jumps: number[] = [];
      for (let i = 0; i < re.items.length; i++) {
        if (i < re.items.length - 1) {
          const split = push({ op: SPLIT, next: prog.length + 1, alt: -1 });
          emit(re.items[i], prog, push);
          jumps.push(push({ op: JMP, next: -1, alt: 0 }));
          prog[split].alt = prog.length;
        } else emit(re.items[i], prog, push);
      }
      for (const j of jumps) prog[j].next = prog.length;
      return;
    }
    case 'rep': {
      for (let i = 0; i < re.min; i++) emit(re.item, prog, push);
      if (re.max < 0) {
        const loop = push({ op: SPLIT, next: -1, alt: -1 });
        emit(re.item, prog, push);
        push({ op: JMP, next: loop, alt: 0 });
        setSplit(prog[loop], loop + 1, prog.length, re.greedy);
        return;
      }
      const splits: number[] = [];
      for (let i = re.min; i < re.max; i++) {
        splits.push(push({ op: SPLIT, next: -1, alt: -1 }));
        emit(re.item, prog, push);
      }
      for (const s of splits) setSplit(prog[s], s + 1, prog.length, re.greedy);
      return;
    }
  }
}

/** A split prefers `take` when greedy and `skip` otherwise. */
function setSplit(inst: Inst, take: number, skip: number, greedy: boolean): void {
  inst.next = greedy ? take : skip;
  inst.alt = greedy ? skip : take;
}
