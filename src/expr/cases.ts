import { isDeepStrictEqual } from 'node:util';
import { exportValue } from './compile.js';
import { compileBoolean, compileString, compileValue } from './contracts.js';
import { compileDepends, type DependencyState } from './depends.js';
import { ExprError } from './errors.js';
import { eventMetadataFromHeaders, eventValueText } from './event.js';
import { renderTemplate } from './template.js';
import { evaluateWhen } from './when.js';
import { errorMessage } from '../log/error-message.js';

/**
 * Runs expression cases in the format of `src/expr/testdata/expr-cases.jsonl`: one JSON object per line
 * with `expr`, `env`, `expect` (true, false, "error" or {"value": V}) and `kind`. Used by
 * `plugflow expr test` and by the test suite, so both judge a case the same way.
 */

export const CASE_KINDS = [
  'event_selector',
  'event_selector_raw',
  'event_value',
  'event_meta',
  'when',
  'depends',
  'retry',
  'expression',
  'template',
] as const;
export type CaseKind = (typeof CASE_KINDS)[number];

export interface ExprCase {
  expr: string;
  env: Record<string, unknown>;
  expect: boolean | 'error' | { value: unknown };
  kind: CaseKind;
  source?: string;
  note?: string;
}

export interface CaseResult {
  line: number;
  case: ExprCase | null;
  passed: boolean;
  /** What happened: the result as JSON, or "error: <message>". */
  actual: string;
  /** Why it failed, one line. */
  problem?: string;
}

/** Evaluates one case's expression the way its kind is used in plugflow. */
export function evaluateCase(c: ExprCase): unknown {
  const env = c.env ?? {};
  switch (c.kind) {
    case 'event_selector':
      return compileBoolean(c.expr, 'selector').evaluate(env);
    case 'event_selector_raw': {
      const { headers, ...rest } = env as { headers?: Record<string, string[]> };
      return compileBoolean(c.expr, 'selector').evaluate({ ...rest, metadata: eventMetadataFromHeaders(headers ?? {}) });
    }
    case 'event_value':
      return eventValueText(compileValue(c.expr, 'valueFrom.event').expression.evaluateRaw(env));
    case 'event_meta':
      return compileString(c.expr, 'submit metadata').evaluate(env);
    case 'when':
      return evaluateWhen(c.expr, env);
    case 'depends':
      return compileDepends(c.expr).evaluate((env as { tasks?: Record<string, DependencyState> }).tasks ?? {});
    case 'retry':
      return compileBoolean(c.expr, 'retry expression').evaluate(env);
    case 'expression':
      return compileValue(c.expr, 'expression').evaluate(env);
    case 'template':
      return renderTemplate(c.expr, env);
    default:
      throw new Error(`unknown case kind ${JSON.stringify((c as { kind: unknown }).kind)} (expected one of ${CASE_KINDS.join(', ')})`);
  }
}

export function runCase(c: ExprCase, line: number): CaseResult {
  let actual: unknown;
  let error: unknown = null;
  try {
    actual = evaluateCase(c);
  } catch (err) {
    error = err;
  }
  if (error !== null) {
    const message = error instanceof Error ? error.message : String(error);
    const shown = `error: ${message.split('\n')[0]}`;
    if (!(error instanceof ExprError))
      return {
        line,
        case: c,
        passed: false,
        actual: shown,
        problem: `unexpected exception (not an expression error): ${message.split('\n')[0]}`,
      };
    if (c.expect === 'error') return { line, case: c, passed: true, actual: shown };
    return { line, case: c, passed: false, actual: shown, problem: `expected ${describeExpect(c.expect)}, got ${shown}` };
  }
  const shown = JSON.stringify(exportValue(actual as never));
  if (c.expect === 'error') return { line, case: c, passed: false, actual: shown, problem: `expected an error, got ${shown}` };
  const want = typeof c.expect === 'boolean' ? c.expect : c.expect.value;
  const passed = isDeepStrictEqual(normalize(actual), normalize(want));
  return passed
    ? { line, case: c, passed, actual: shown }
    : { line, case: c, passed, actual: shown, problem: `expected ${describeExpect(c.expect)}, got ${shown}` };
}

function describeExpect(e: ExprCase['expect']): string {
  return e === 'error' ? 'an error' : typeof e === 'boolean' ? String(e) : JSON.stringify(e.value);
}

/** JSON round trip: prototype-free maps and plain objects compare equal, ints compare as numbers. */
function normalize(v: unknown): unknown {
  return JSON.parse(JSON.stringify(exportValue(v as never)) ?? 'null');
}

/** Parses a JSONL text of cases; a line that is not a valid case is reported as a failure. */
export function runCasesText(text: string): CaseResult[] {
  const results: CaseResult[] = [];
  text.split('\n').forEach((raw, i) => {
    const lineText = raw.trim();
    if (!lineText || lineText.startsWith('//')) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(lineText);
    } catch (err) {
      results.push({ line: i + 1, case: null, passed: false, actual: '', problem: `not valid JSON: ${errorMessage(err)}` });
      return;
    }
    const problem = validateCase(parsed);
    if (problem) {
      results.push({ line: i + 1, case: null, passed: false, actual: '', problem });
      return;
    }
    results.push(runCase(parsed as ExprCase, i + 1));
  });
  return results;
}

function validateCase(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'a case must be a JSON object';
  const c = v as Record<string, unknown>;
  if (typeof c.expr !== 'string') return 'field "expr" must be a string';
  if (c.env !== undefined && (typeof c.env !== 'object' || c.env === null || Array.isArray(c.env))) return 'field "env" must be an object';
  if (!(CASE_KINDS as readonly unknown[]).includes(c.kind))
    return `field "kind" must be one of ${CASE_KINDS.join(', ')}, got ${JSON.stringify(c.kind)}`;
  const e = c.expect;
  const ok = e === true || e === false || e === 'error' || (typeof e === 'object' && e !== null && !Array.isArray(e) && 'value' in e);
  if (!ok) return 'field "expect" must be true, false, "error" or {"value": ...}';
  return null;
}
