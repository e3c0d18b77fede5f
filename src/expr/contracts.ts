import { compile, type CompileOptions, type CompiledExpression, type ExprEnv, exportValue } from './compile.js';
import { ExprError } from './errors.js';
import { describeValue, toJson } from './format.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { Meter, Value } from './values.js';

/**
 * Result contracts: each use of the language expects one kind of result. A selector, `when`,
 * `depends`, a retry expression and an HTTP successCondition must give a boolean; submit
 * metadata must give a string; `valueFrom` takes any value. The check is part of the compiled
 * object so callers cannot forget it, and its error names the use and shows what came out:
 * `selector must evaluate to a boolean, got string "garbage"`.
 */

export interface TypedExpression<T> {
  readonly source: string;
  readonly what: string;
  readonly expression: CompiledExpression;
  evaluate(env: ExprEnv): T;
}

export function compileBoolean(source: string, what: string, options: Omit<CompileOptions, 'what'> = {}): TypedExpression<boolean> {
  const expression = compile(source, { ...options, what });
  return {
    source,
    what,
    expression,
    evaluate(env) {
      const v = expression.evaluateRaw(env);
      if (typeof v === 'boolean') return v;
      throw expression.resultError(`${what} must evaluate to a boolean, got ${describeValue(v)}`);
    },
  };
}

export function compileString(source: string, what: string, options: Omit<CompileOptions, 'what'> = {}): TypedExpression<string> {
  const expression = compile(source, { ...options, what });
  return {
    source,
    what,
    expression,
    evaluate(env) {
      const v = expression.evaluateRaw(env);
      if (typeof v === 'string') return v;
      throw expression.resultError(`${what} must evaluate to a string, got ${describeValue(v)}`);
    },
  };
}

export interface ValueOptions extends Omit<CompileOptions, 'what'> {
  /** When false, a nil result is an error (e.g. a parameter value that must exist). Default true. */
  allowNil?: boolean;
}

export function compileValue(source: string, what: string, options: ValueOptions = {}): TypedExpression<unknown> {
  const expression = compile(source, { ...options, what });
  const allowNil = options.allowNil ?? true;
  return {
    source,
    what,
    expression,
    evaluate(env) {
      const v = expression.evaluateRaw(env);
      if (!allowNil && (v === null || v === undefined)) throw expression.resultError(`${what} evaluated to nil`);
      return exportValue(v, expression.limits.maxSteps, what);
    },
  };
}

/** A budget for formatting values outside an evaluation (same limits as evaluations). */
export function standaloneMeter(what?: string): Meter {
  let steps = 0;
  let bytes = 0;
  const limit = (reason: string): never => {
    throw new ExprError({ code: 'limit', reason, what });
  };
  return {
    charge(n) {
      steps += n;
      if (steps > DEFAULT_LIMITS.maxSteps) limit(`value is too large to format (more than ${DEFAULT_LIMITS.maxSteps} steps)`);
    },
    alloc(n) {
      bytes += n;
      if (bytes > DEFAULT_LIMITS.maxMemory) limit(`value is too large to format (more than ${DEFAULT_LIMITS.maxMemory >> 20} MiB)`);
    },
    limit,
    maxValueDepth: DEFAULT_LIMITS.maxValueDepth,
    maxStringLength: DEFAULT_LIMITS.maxStringLength,
  };
}

/**
 * The text form of a value where a string is needed (parameter values, template output):
 * strings as they are, everything else as compact JSON with sorted keys, like the peer's
 * `json.Marshal`. nil becomes `null`.
 */
export function valueToText(v: unknown, what?: string): string {
  if (typeof v === 'string') return v;
  return toJson(normalizeHostValue(v), standaloneMeter(what));
}

/** Host values that are not expression values (undefined, Date, ...) are made JSON-like. */
function normalizeHostValue(v: unknown): Value {
  if (v === undefined) return null;
  return v as Value;
}
