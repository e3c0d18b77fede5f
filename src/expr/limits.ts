/**
 * Safety limits. Selectors run on a server against payloads from anyone who can reach the event
 * endpoint, so neither the expression nor the payload may be able to hang the process, blow the
 * stack or exhaust memory. Straight-line evaluation costs at most the size of the AST (which is
 * bounded at compile time); everything that loops — predicates, builtins over collections, deep
 * equality, JSON, regular expressions, string operations — charges a step budget per element (and
 * per 16 characters) it touches, and everything an evaluation builds is charged against a memory
 * budget, so any expression finishes or fails within a bounded CPU time and memory (see cost.ts).
 */
export interface ExprLimits {
  /** Longest accepted source text, in characters. */
  maxSourceLength: number;
  /** Most AST nodes in one expression. */
  maxNodes: number;
  /** Deepest nesting of the AST (parentheses, operators, calls, literals). */
  maxDepth: number;
  /** Evaluation budget: steps charged by loops and by operations over collections and strings. */
  maxSteps: number;
  /** Memory budget: estimated bytes of the values one evaluation builds (lists, maps, strings). */
  maxMemory: number;
  /** Longest string an evaluation may produce (concatenation, repeat, join, JSON, ...). */
  maxStringLength: number;
  /** Deepest nesting of a value walked by equality, JSON encoding, formatting, flatten. */
  maxValueDepth: number;
  /** Most instructions of one compiled regular expression. */
  maxRegexProgram: number;
}

export const DEFAULT_LIMITS: Readonly<ExprLimits> = Object.freeze({
  maxSourceLength: 10_000,
  maxNodes: 2_000,
  maxDepth: 200,
  maxSteps: 1_000_000,
  maxMemory: 32 << 20,
  maxStringLength: 1 << 20,
  maxValueDepth: 100,
  maxRegexProgram: 20_000,
});

export function resolveLimits(partial?: Partial<ExprLimits>): ExprLimits {
  if (!partial) return DEFAULT_LIMITS;
  const out: ExprLimits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ExprLimits)[]) {
    const v = partial[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v <= 0) throw new RangeError(`expression limit ${key} must be a positive integer, got ${String(v)}`);
    out[key] = v;
  }
  return out;
}
