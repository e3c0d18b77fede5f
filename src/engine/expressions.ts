/**
 * The engine's uses of the expression language (src/expr), in the shapes the executors need,
 * with errors turned into one-line messages that start with the field at fault:
 * `spec.templates[main].steps[0][a].when: cannot resolve {{steps.x.outputs.result}} … (at 1:1)`.
 *
 * Nothing here evaluates anything itself; src/expr does. What this adds is the engine's policy:
 * - arguments, loop sources, `when`, output references are rendered strictly: every tag must
 *   resolve;
 * - a leaf template (what a pod or the agent runs) is rendered leniently, then checked: tags that
 *   name engine variables (`inputs.`, `workflow.`, `steps.`, `tasks.`, `item`, `pod.`, `node.`,
 *   `retries`) and `{{=…}}` tags must have resolved, others are left for whoever reads them
 *   (metrics use `{{status}}`, `{{duration}}`); `metrics` itself is not rendered here;
 * - a `podSpecPatch` (template or workflow level) is rendered in the parsed document's string
 *   leaves only (structured-render.ts), never in its source text: a value cannot reshape a pod
 *   beyond its own position. A tag that is a whole unquoted value inserts one JSON value there
 *   (`"limits": {{inputs.parameters.r}}`); anything that is not one value is refused.
 */
import { setOwn, type Inputs, type Template } from '../api/index.js';
import {
  compile,
  compileBoolean,
  compileDepends,
  compileTemplate,
  compileValue,
  compileWhen,
  evaluateWhen,
  ExprError,
  expandVars,
  renderTemplate,
  valueToText,
  type DependencyState,
} from '../expr/index.js';
import type { ValueSource } from './outputs.js';
import { renderStructuredText } from './structured-render.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** One-line message for an expression error at `field`. */
export function exprMessage(err: unknown, field: string): string {
  if (err instanceof ExprError) {
    const at = err.line !== undefined ? ` (at ${err.line}:${err.column})` : '';
    return `${field}: ${err.reason}${at}`;
  }
  return `${field}: ${errorMessage(err)}`;
}

function wrap<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ExprError) throw new Error(exprMessage(err, field));
    throw err;
  }
}

/** Substitutes every tag of `text`; an unresolvable tag is an error naming `field`. */
export function renderString(text: string, vars: Vars, field: string): string {
  return wrap(field, () => renderTemplate(text, vars, {}, field));
}

/** `renderString` over every string inside `value` (objects and lists are copied). */
export function renderValue<T>(value: T, vars: Vars, field: string): T {
  return mapStrings(value, field, (text, f) => renderString(text, vars, f)) as T;
}

/** Names of engine variables: a tag naming one must resolve (see renderLeafTemplate). */
export const ENGINE_PREFIXES = /^(inputs\.|workflow\.|steps\.|tasks\.|item$|item\.|pod\.|node\.|retries$)/;

/**
 * Renders a leaf template for a pod or task (see the policy above). `inputs` replaces the
 * template's declared inputs, so the pod builder and plugins see the bound values.
 */
export function renderLeafTemplate(template: Template, vars: Vars, where: string, inputs?: Inputs): Template {
  const { metrics, podSpecPatch, ...rest } = template;
  if (inputs && (inputs.parameters?.length || inputs.artifacts?.length)) rest.inputs = inputs;
  const render = leafRenderer(vars);
  const rendered = mapStrings(rest, where, render) as Template;
  if (podSpecPatch !== undefined)
    rendered.podSpecPatch = wrap(`${where}.podSpecPatch`, () => renderStructuredText(podSpecPatch, `${where}.podSpecPatch`, render));
  if (metrics !== undefined) rendered.metrics = metrics;
  return rendered;
}

/**
 * The workflow-level `spec.podSpecPatch` rendered for one pod with its leaf variables, in string
 * leaves only, like the template's (`field` names it in errors).
 */
export function renderPodSpecPatch(text: string, vars: Vars, field: string): string {
  return wrap(field, () => renderStructuredText(text, field, leafRenderer(vars)));
}

/** The lenient-then-checked render of one string of a leaf template (see the policy above). */
function leafRenderer(vars: Vars): (text: string, field: string) => string {
  return (text, field) =>
    wrap(field, () => {
      const out = renderTemplate(text, vars, { leaveUnresolved: true }, field);
      if (out.includes('{{') && (out.includes('{{=') || tagNames(out).some((n) => ENGINE_PREFIXES.test(n)))) {
        // Render strictly to get the message listing what could not be resolved.
        return renderTemplate(text, vars, {}, field);
      }
      return out;
    });
}

/** A copy of `value` with `fn` applied to every string; own keys only, written with setOwn. */
/**
 * Whether any string in `value` holds a tag (`{{`). Templates are asked once each (the answer is
 * kept by object): a suspend step of a loop need not render, nor build its variables, on every
 * reconcile of its 100,000 items.
 */
export function hasTags(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('{{');
  if (value === null || typeof value !== 'object') return false;
  const known = tagged.get(value);
  if (known !== undefined) return known;
  const found = Array.isArray(value) ? value.some(hasTags) : Object.values(value).some(hasTags);
  tagged.set(value, found);
  return found;
}

const tagged = new WeakMap<object, boolean>();

function mapStrings(value: unknown, path: string, fn: (text: string, field: string) => string): unknown {
  if (typeof value === 'string') return fn(value, path);
  if (Array.isArray(value)) return value.map((v, i) => mapStrings(v, `${path}[${i}]`, fn));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, mapStrings(v, `${path}.${k}`, fn));
    return out;
  }
  return value;
}

/** Evaluates a step/task `when`; also returns the condition with its tags substituted, for messages. */
export function evaluateWhenText(text: string, vars: Vars, field: string): { result: boolean; rendered: string } {
  return wrap(field, () => ({
    result: evaluateWhen(text, vars),
    rendered: renderTemplate(text, vars, { leaveUnresolved: true }, field),
  }));
}

/** Evaluates a retry `expression`: its boolean, or a message saying why it could not be evaluated. */
export function evaluateRetryExpression(expression: string, env: Record<string, unknown>, field: string): boolean | string {
  try {
    return compileBoolean(expression, 'retry expression').evaluate(env);
  } catch (err) {
    if (err instanceof ExprError) return exprMessage(err, field);
    throw err;
  }
}

/**
 * Evaluates a boolean expression over the variables (a lifecycle hook's `expression`:
 * `steps["build"].status == "Running"`); `{{…}}` tags in it are substituted first.
 */
export function evaluateCondition(expression: string, vars: Vars, field: string): boolean {
  const text = expression.includes('{{') ? renderString(expression, vars, field) : expression;
  return wrap(field, () => compileBoolean(text, 'the hook expression').evaluate(expandVars(vars)));
}

/** Values for output parameters (`valueFrom.parameter`, `valueFrom.expression`, `value`). */
export function valueSource(vars: Vars): ValueSource {
  return {
    render: (text, field) => renderString(text, vars, field),
    evaluate: (expression, field) =>
      wrap(field, () => valueToText(compileValue(expression, 'valueFrom.expression', { allowNil: false }).evaluate(expandVars(vars)))),
  };
}

export interface CompiledDepends {
  text: string;
  /** The tasks the expression names. */
  names: readonly string[];
  evaluate(tasks: Record<string, DependencyState>): boolean;
}

export function compileDependsText(text: string, field: string): CompiledDepends {
  const compiled = wrap(field, () => compileDepends(text));
  return {
    text,
    names: compiled.taskNames,
    evaluate: (tasks) => wrap(field, () => compiled.evaluate(tasks)),
  };
}

/** Evaluates `depends` with the states `lookup` gives for the tasks it names. */
export function evaluateDepends(compiled: CompiledDepends, lookup: (task: string) => DependencyState | undefined): boolean {
  const tasks: Record<string, DependencyState> = {};
  for (const name of compiled.names) {
    const state = lookup(name);
    if (state) tasks[name] = state;
  }
  return compiled.evaluate(tasks);
}

/** A message when `text` has a malformed tag (unclosed, empty, bad `{{=…}}`), else undefined. */
export function checkTags(text: string): string | undefined {
  if (!text.includes('{{')) return undefined;
  try {
    compileTemplate(text);
    return undefined;
  } catch (err) {
    if (err instanceof ExprError)
      return `has a malformed tag: ${err.reason}${err.line !== undefined ? ` (at ${err.line}:${err.column})` : ''}`;
    throw err;
  }
}

/** A message when `text` is not a valid `when` condition (tags are parsed, not resolved), else undefined. */
export function checkWhen(text: string): string | undefined {
  try {
    compileWhen(text);
    return undefined;
  } catch (err) {
    if (err instanceof ExprError)
      return `is not a valid condition: ${err.reason}${err.line !== undefined ? ` (at ${err.line}:${err.column})` : ''}`;
    throw err;
  }
}

/** A message when `text` is not a valid expression, else undefined. */
export function checkExpression(text: string): string | undefined {
  try {
    compile(text);
    return undefined;
  } catch (err) {
    if (err instanceof ExprError)
      return `is not a valid expression: ${err.reason}${err.line !== undefined ? ` (at ${err.line}:${err.column})` : ''}`;
    throw err;
  }
}

/** Names used in simple `{{name}}` tags of `text` (expression tags are not included). */
export function tagNames(text: string): string[] {
  const out: string[] = [];
  const re = /\{\{\s*([^=\s{}][^{}]*?)\s*\}\}/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push(m[1]!);
  return out;
}
