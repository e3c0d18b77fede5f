/**
 * Operator tables of the expression language, as expr-lang defines them. Precedences (higher
 * binds tighter): `|` 0 · `or` `||` 10 · `and` `&&` 15 · comparisons 20 · `..` 25 · `+ -` 30 ·
 * `* / %` 60 · `**` `^` 100 (right-associative) · `??` 500; unary `! not` 50, `- +` 90.
 */

export const BINARY: Record<string, { prec: number; right?: boolean }> = {
  '|': { prec: 0 },
  or: { prec: 10 },
  '||': { prec: 10 },
  and: { prec: 15 },
  '&&': { prec: 15 },
  '==': { prec: 20 },
  '!=': { prec: 20 },
  '<': { prec: 20 },
  '>': { prec: 20 },
  '<=': { prec: 20 },
  '>=': { prec: 20 },
  in: { prec: 20 },
  matches: { prec: 20 },
  contains: { prec: 20 },
  startsWith: { prec: 20 },
  endsWith: { prec: 20 },
  '..': { prec: 25 },
  '+': { prec: 30 },
  '-': { prec: 30 },
  '*': { prec: 60 },
  '/': { prec: 60 },
  '%': { prec: 60 },
  '**': { prec: 100, right: true },
  '^': { prec: 100, right: true },
  '??': { prec: 500 },
};

export const UNARY: Record<string, number> = { not: 50, '!': 50, '-': 90, '+': 90 };

export const NEGATABLE = new Set(['in', 'matches', 'contains', 'startsWith', 'endsWith']);

/** Builtins whose arguments include a predicate closure, with their argument shapes. */
export const PREDICATE_BUILTINS: Record<string, { args: ('expr' | 'pred')[]; optional: number }> = {
  all: { args: ['expr', 'pred'], optional: 0 },
  none: { args: ['expr', 'pred'], optional: 0 },
  any: { args: ['expr', 'pred'], optional: 0 },
  one: { args: ['expr', 'pred'], optional: 0 },
  filter: { args: ['expr', 'pred'], optional: 0 },
  map: { args: ['expr', 'pred'], optional: 0 },
  count: { args: ['expr', 'pred'], optional: 1 },
  sum: { args: ['expr', 'pred'], optional: 1 },
  find: { args: ['expr', 'pred'], optional: 0 },
  findIndex: { args: ['expr', 'pred'], optional: 0 },
  findLast: { args: ['expr', 'pred'], optional: 0 },
  findLastIndex: { args: ['expr', 'pred'], optional: 0 },
  groupBy: { args: ['expr', 'pred'], optional: 0 },
  sortBy: { args: ['expr', 'pred', 'expr'], optional: 1 },
  reduce: { args: ['expr', 'pred', 'expr'], optional: 1 },
};
