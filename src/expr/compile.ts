import { forEachChild, type Node } from './ast.js';
import { NodeCompiler, type Fn } from './compile-node.js';
import { EvalContext, nodeError, type ProgramInfo } from './context.js';
import { ExprError } from './errors.js';
import { DEFAULT_LIMITS, resolveLimits, type ExprLimits } from './limits.js';
import { parse } from './parser.js';
import { isMap, type Value, type ValueMap } from './values.js';

/**
 * compile(): source text → a reusable CompiledExpression. All parsing, name resolution,
 * function checks and regex-literal compilation happen once here; evaluate() only runs closures.
 */

export interface CompileOptions {
  /** The use, named in every error ("selector", "when", "retry expression", ...). */
  what?: string;
  limits?: Partial<ExprLimits>;
}

/** The environment an expression reads: a map of top-level names to JSON-like values. */
export type ExprEnv = Readonly<Record<string, unknown>>;

export class CompiledExpression {
  /** @internal */
  constructor(
    readonly source: string,
    readonly what: string | undefined,
    readonly limits: ExprLimits,
    private readonly root: Fn,
    private readonly slotCount: number,
    /** Number of AST nodes (after parsing), a measure of the expression's size. */
    readonly nodeCount: number,
    private readonly rootNode: Node,
  ) {
    this.info = { source, what };
  }

  private readonly info: ProgramInfo;
  private spare: EvalContext | null = null;

  /**
   * Evaluates against `env` and returns plain JS values: numbers for ints and floats alike
   * (ints beyond 2^53 lose precision), prototype-free objects for maps built by the
   * expression. Throws ExprError for every problem caused by the expression or its input.
   */
  evaluate(env: ExprEnv): unknown {
    return exportValue(this.evaluateRaw(env), this.limits.maxSteps, this.what);
  }

  /** Evaluates and returns the internal value (ints as bigint), e.g. to format it exactly. */
  evaluateRaw(env: ExprEnv): Value {
    if (typeof env !== 'object' || env === null || Array.isArray(env)) {
      throw new ExprError({ code: 'type', what: this.what, reason: 'the environment must be a plain object of names to values' });
    }
    // Evaluation is synchronous and never re-enters the same expression, so one context can be
    // reused; a second one is only made if an evaluation is somehow already running.
    let ctx = this.spare;
    this.spare = null;
    ctx ??= new EvalContext(this.info, this.limits, this.slotCount);
    ctx.begin(env as ValueMap);
    try {
      const v = this.root(ctx);
      return v === undefined ? null : v;
    } catch (err) {
      if (err instanceof ExprError) throw err;
      // Only ExprErrors leave an evaluation, so every caller (event endpoint, controller) treats
      // whatever an expression does as the expression's failure. Deep recursion in the host's
      // data (cyclic objects, huge nesting) or a value too large for the JS engine is a limit;
      // anything else is a bug of ours, reported as such with the original message.
      const at = ctx.at ?? this.rootNode;
      if (err instanceof RangeError) {
        if (/call stack/i.test(err.message))
          throw nodeError(this.info, 'limit', 'evaluation nested too deeply (the input is too deep or cyclic)', at);
        throw nodeError(this.info, 'limit', `a value would be too large (${err.message})`, at);
      }
      throw nodeError(this.info, 'call', `internal error (please report it): ${err instanceof Error ? err.message : String(err)}`, at);
    } finally {
      ctx.end();
      this.spare = ctx;
    }
  }

  /** @internal fails with the position of the whole expression (result-contract errors). */
  resultError(reason: string): ExprError {
    return new ExprError({
      code: 'result',
      reason,
      what: this.what,
      source: this.source,
      offset: this.rootNode.s,
      length: Math.max(1, this.rootNode.e - this.rootNode.s),
      reasonNamesUse: true,
    });
  }
}

export function compile(source: string, options: CompileOptions = {}): CompiledExpression {
  if (typeof source !== 'string') {
    throw new ExprError({
      code: 'syntax',
      what: options.what,
      reason: `expression must be a string, got ${source === null ? 'null' : typeof source}`,
    });
  }
  const limits = resolveLimits(options.limits);
  const { node, nodeCount } = parse(source, limits, options.what);
  checkDepth(node, limits, { source, what: options.what });
  const compiler = new NodeCompiler({ source, what: options.what }, limits);
  const root = compiler.compileRoot(node);
  return new CompiledExpression(source, options.what, limits, root, compiler.slotCount, nodeCount, node);
}

/** Long `a || b || ...` chains are built without recursion by the parser; bound the tree depth too. */
function checkDepth(root: Node, limits: ExprLimits, info: ProgramInfo): void {
  const stack: [Node, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [Node, number];
    if (depth > limits.maxDepth) {
      throw nodeError(
        info,
        'limit',
        `expression is nested more than ${limits.maxDepth} levels deep (for long lists of alternatives use "x in [...]")`,
        node,
      );
    }
    forEachChild(node, (child) => stack.push([child, depth + 1]));
  }
}

/**
 * Internal value → plain JS (bigint → number), copying only what contains ints. A value built by
 * an expression can share parts (`let a = [x, x]; [a, a]` doubles per level), so each part is
 * converted once (memoized by identity) and the walk is bounded: it never costs more than
 * `maxValues` distinct lists and maps, whatever the sharing.
 */
export function exportValue(v: Value, maxValues: number = DEFAULT_LIMITS.maxSteps, what?: string): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (typeof v !== 'object' || v === null) return v;
  const budget = { left: maxValues, max: maxValues, what };
  return exportDeep(v, new Map(), budget, 0);
}

function exportDeep(v: Value, memo: Map<object, unknown>, budget: { left: number; max: number; what?: string }, depth: number): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (typeof v !== 'object' || v === null) return v;
  if (memo.has(v)) return memo.get(v); // shared, or cyclic host data (then the original)
  if (depth > 200) return v; // absurdly deep host data: left as is
  if (--budget.left < 0)
    throw new ExprError({
      code: 'limit',
      what: budget.what,
      reason: `the result is too large to return (more than ${budget.max} steps to convert it)`,
    });
  memo.set(v, v);
  let result: unknown = v;
  if (Array.isArray(v)) {
    budget.left -= v.length >> 4;
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = exportDeep(v[i], memo, budget, depth + 1);
      if (x !== v[i] && out === null) out = v.slice(0, i);
      if (out) out.push(x);
    }
    result = out ?? v;
  } else if (isMap(v)) {
    let out: Record<string, unknown> | null = null;
    const keys = Object.keys(v);
    budget.left -= keys.length >> 4;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const x = exportDeep(v[k], memo, budget, depth + 1);
      if (x !== v[k] && out === null) {
        out = Object.create(null) as Record<string, unknown>;
        for (let j = 0; j < i; j++) out[keys[j]] = v[keys[j]];
      }
      if (out) out[k] = x;
    }
    result = out ?? v;
  }
  memo.set(v, result);
  return result;
}
