/**
 * Hostile expressions for the expression-cost bound (issue 10 item 3): the cases that were
 * reported, every builtin called with the largest inputs an event payload or a workflow can hold
 * (one call, and the same call repeated in a loop that keeps every result), and a seeded
 * generator of random hostile expressions. Shared by the unit test (src/expr/cost.test.ts), the
 * fuzz target (expr-cost-fuzz.ts) and the bench (bench/expr-bench.ts), so all three measure the
 * same thing. The invariant: each expression finishes or throws an ExprError within 250 ms of
 * CPU and 64 MiB.
 */
import { BUILTINS } from '../../src/expr/builtins.js';
import { compile, ExprError, type ExprLimits } from '../../src/expr/index.js';
import { PREDICATE_BUILTINS } from '../../src/expr/operators.js';
import { SPRIG } from '../../src/expr/sprig.js';

/** The bound every expression must stay within. */
export const CPU_BOUND_MS = 250;
export const MEMORY_BOUND_MIB = 64;

/** The cases reported in the issue, as written there (plus the template form of the first). */
export const REPORTED_CASES: readonly string[] = [
  'let L = 0..399999; count(0..1999, len(sprig.reverse(L)) > 0) > 0',
  'let L = 0..399999; len(sprig.concat(L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L)) > 0',
  'sprig.replace("a", repeat("b", 1000000), repeat("a", 1000000)) != ""',
  'sprig.indent(1000000, repeat("\\n", 1000000)) != ""',
  'let L = 0..399999; count(0..1999, len(sprig.without(L, 1)) > 0) > 0',
  'let L = 0..399999; count(0..1999, len(sprig.sortAlpha(L)) > 0) > 0',
  'count(0..1999, len(keys(M)) > 0) > 0',
  'let L = 0..399999; count(0..1999, len(take(L, 399999)) > 0) > 0',
  'count(0..1999, len(sprig.title(S)) > 0) > 0',
];

/** Payload-sized values: each is as large as one event body (1 MiB) can make it. */
export function hostileEnv(): Record<string, unknown> {
  const M: Record<string, number> = {};
  for (let i = 0; i < 60_000; i++) M[`key-${i}`] = i;
  let D: unknown = 'bottom';
  for (let i = 0; i < 95; i++) D = i % 2 ? [D, D] : { a: D, b: D };
  return {
    L: Array.from({ length: 150_000 }, (_, i) => i * 1.5),
    S: 'ab'.repeat(500_000),
    W: 'a b '.repeat(250_000),
    NL: '\n'.repeat(1_000_000),
    U: 'é😀'.repeat(300_000),
    LS: Array.from({ length: 1000 }, (_, i) => `${i}-` + 'x'.repeat(1000)),
    M,
    D,
    J: JSON.stringify(Array.from({ length: 100_000 }, (_, i) => ({ a: i })))
      .slice(0, 1_000_000)
      .replace(/,\{[^}]*$/, ']'),
    T: '2024-05-01T10:00:00.123456789+02:00',
  };
}

export const BIG: readonly string[] = ['L', 'S', 'W', 'NL', 'U', 'LS', 'M', 'D', 'J', '0..999999', 'repeat("ab", 524288)'];
const SMALL = ['1', '"a"', '-1', '""', '"\\n"', '1000000', '[1, "b"]', '{a: 1}', 'nil', '"2006-01-02T15:04:05Z07:00"'];

/**
 * Every builtin (the language's own and sprig.*) with each large value in every argument, with
 * small values beside it, once and in a loop of 10,000 that keeps every result. A new builtin is
 * covered without editing this list.
 */
export function everyBuiltinCall(pool: readonly string[] = BIG): string[] {
  const out: string[] = [];
  const defs: [string, { min: number; max: number }][] = [
    ...Object.entries(BUILTINS),
    ...Object.entries(SPRIG).map(([k, v]) => [`sprig.${k}`, v] as [string, { min: number; max: number }]),
  ];
  for (const [name, def] of defs) {
    const arity = Math.max(def.min, Math.min(def.max, 3));
    for (const big of pool) {
      const all = Array.from({ length: arity }, () => big);
      out.push(`${name}(${all.join(', ')})`);
      for (let i = 0; i < arity; i++) {
        const small = SMALL[(name.length + i) % SMALL.length];
        const args = Array.from({ length: arity }, (_, j) => (j === i ? big : small));
        out.push(`map(0..9999, ${name}(${args.join(', ')}))`);
      }
    }
  }
  for (const name of Object.keys(PREDICATE_BUILTINS)) {
    for (const big of ['L', 'LS', '0..999999']) {
      out.push(
        `${name}(${big}, ${name === 'reduce' ? '#acc' : name === 'map' || name === 'sortBy' || name === 'groupBy' ? 'string(#)' : name === 'sum' ? '1' : 'string(#) != ""'})`,
      );
      out.push(
        `${name}(${big}, ${name === 'reduce' ? 'concat(#acc, [#])' : name === 'map' ? 'S' : name === 'sum' ? 'len(S)' : name === 'sortBy' || name === 'groupBy' ? 'S + string(#)' : 'S + string(#) == S'}${name === 'reduce' ? ', []' : ''})`,
      );
    }
  }
  return out;
}

/** Operators and language forms with the same large inputs. */
export const OPERATOR_CASES: readonly string[] = [
  'count(0..99999, S + "x" != S)',
  'count(0..99999, S < S + "x")',
  'count(0..99999, S contains "b!")',
  'count(0..99999, S matches "b!$")',
  'count(0..99999, S[1:5] == "x")',
  'count(0..99999, S[1000] == 1)',
  'count(0..99999, L == L)',
  'count(0..99999, 1.5e10 in L)',
  'count(0..99999, len(L[1:150000]) > 0)',
  'reduce(0..99999, #acc + S, "")',
  'reduce(0..99999, #acc + "xxxxxxxxxxxxxxxx", "")',
  'map(0..99999, [S, S, S, S, S, S, S, S])',
  'map(0..99999, {a: L, b: S, c: M})',
  'map(0..9999, 0..99)',
  'let x = 0..999999; let y = 0..999999; len(x) + len(y)',
  'count(0..99999, toJson(D) != "")',
  'count(0..999, fromJson(J) != nil)',
  'count(0..999, jsonpath(J, "$..a") != nil)',
  'count(0..999, jsonpath(J, "$[?(@.a > 5 && @.a < 100000)].a") != nil)',
  'count(0..999, S matches ("(a)(b)(a)(b)(a)(b)(a)(b)(a)(b)(a)(b)(a)(b)(a)(b)" + string(#)))',
  'count(0..99999, "x" matches ("(x{1000}){19}|y" + string(#)))',
  'count(0..99999, sprig.regexReplaceAll("(a)(b)", S, "$2$1") != "")',
  'count(0..999, len(sprig.regexSplit("b", S, -1)) > 0)',
  'count(0..999, len(split(U, "")) > 0)',
  'count(0..999, sprig.date(repeat("Monday January 2006 .000000000 ", 30000), T) != "")',
  'map(0..9999, uniq(LS))',
  'map(0..9999, sprig.uniq(LS))',
  'map(0..999, sort(LS))',
  'map(0..999, sortBy(LS, #))',
  'map(0..999, groupBy(LS, #))',
  'map(0..99999, string(M))',
];

/** Seeded random hostile expressions: builtins and operators nested over large values and ranges. */
export function randomHostile(next: () => number, depth = 3): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const names = [...Object.keys(BUILTINS), ...Object.keys(SPRIG).map((k) => `sprig.${k}`)];
  const leaf = (): string => pick([...BIG, ...SMALL, '#', `0..${Math.floor(next() * 1e6)}`, `repeat(S, ${Math.floor(next() * 4)})`]);
  const gen = (d: number): string => {
    if (d <= 0) return leaf();
    const sub = () => gen(d - 1);
    switch (Math.floor(next() * 8)) {
      case 0:
      case 1:
      case 2: {
        const n = Math.floor(next() * 3) + 1;
        return `${pick(names)}(${Array.from({ length: n }, sub).join(', ')})`;
      }
      case 3:
        return `${pick(['map', 'filter', 'count', 'any', 'all', 'sortBy', 'groupBy'])}(${pick(['0..99999', 'L', 'LS', sub()])}, ${sub()})`;
      case 4:
        return `reduce(${pick(['0..9999', 'L', sub()])}, ${pick(['#acc + ' + sub(), 'concat(#acc, [' + sub() + '])', sub()])}, ${pick(['""', '[]', '0'])})`;
      case 5:
        return `${sub()} ${pick(['+', '==', '!=', '<', 'in', 'contains', 'matches', '..', '??'])} ${sub()}`;
      case 6:
        return `let v = ${sub()}; ${pick(['map(0..9999, v)', 'v', '[v, v, v]', 'count(0..99999, v != nil)'])}`;
      default:
        return `${sub()}[${pick(['1:100000', '0', '-1', '"a"'])}]`;
    }
  };
  return gen(depth);
}

export interface CostSample {
  source: string;
  cpuMs: number;
  heapMiB: number;
  outcome: 'value' | 'expr-error' | 'other-error';
  message: string;
  error?: unknown;
}

/**
 * Evaluates one expression and measures it: CPU time of the process (GC threads included) and
 * the heap grown during the evaluation (pass `gc` when the process runs with --expose-gc, to
 * collect earlier garbage first; the figure is the growth seen at the end, a sanity bound — the
 * hard bound is the fuzz child's heap limit).
 */
let collectedAt = 0;

export function measureExpression(source: string, env: Record<string, unknown>, gc?: () => void, limits?: Partial<ExprLimits>): CostSample {
  // A full collection costs tens of ms with the large environment: only when garbage has piled up.
  if (gc && process.memoryUsage().heapUsed > collectedAt + (48 << 20)) {
    gc();
    collectedAt = process.memoryUsage().heapUsed;
  }
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  let outcome: CostSample['outcome'] = 'value';
  let message = '';
  let error: unknown;
  let peak = heap0;
  try {
    compile(source, { what: 'fuzz', limits }).evaluate(env);
  } catch (err) {
    error = err;
    outcome = err instanceof ExprError ? 'expr-error' : 'other-error';
    message = err instanceof Error ? `${err.name}: ${err.message.split('\n')[0]}` : String(err);
  }
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  const cpu = process.cpuUsage(cpu0);
  return { source, cpuMs: (cpu.user + cpu.system) / 1000, heapMiB: (peak - heap0) / 2 ** 20, outcome, message, error };
}
