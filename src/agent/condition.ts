/**
 * The http template's successCondition, evaluated with the project's expression language
 * (src/expr). Compiled once per distinct expression: every task of a loop shares it.
 */
import { compile, type CompiledExpression } from '../expr/index.js';
import type { EvaluateCondition } from './http-template.js';

const cache = new Map<string, CompiledExpression>();

export const evaluateSuccessCondition: EvaluateCondition = (expression, env) => {
  let program = cache.get(expression);
  if (!program) {
    program = compile(expression, { what: 'http.successCondition' });
    if (cache.size > 1000) cache.clear();
    cache.set(expression, program);
  }
  const value = program.evaluate(env);
  if (typeof value !== 'boolean') throw new Error(`must yield true or false, got ${value === null ? 'nil' : typeof value}`);
  return value;
};
