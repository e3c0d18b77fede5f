/**
 * The expression language of plugflow (expr-lang's syntax, as the peer system uses it), with
 * the dialects around it. Everything here is pure: no I/O, no Kubernetes, no globals beyond
 * bounded caches. Import from this module only.
 *
 * Uses and their helpers:
 * - event binding selector, `when`-style booleans, retry `expression`, HTTP `successCondition`:
 *   `compileBoolean(source, what)` — `what` names the use in errors ("selector", "retry
 *   expression", "successCondition"); the result must be a boolean.
 * - submit metadata (name, labels, annotations): `compileString(source, what)`.
 * - `valueFrom.expression`, `valueFrom.event`: `compileValue(source, what)`; for event values
 *   turn the result into the parameter text with `eventValueText(value)`.
 * - `{{name}}` / `{{=expr}}` tags: `renderTemplate(text, vars, { leaveUnresolved })` or
 *   `compileTemplate(text).render(vars)`; vars is a flat map
 *   (`{"inputs.parameters.p": "1", "steps.a.outputs.result": "x"}`).
 * - step/task `when`: `evaluateWhen(text, vars)` or `compileWhen(text).evaluate(vars)`.
 * - DAG `depends`: `compileDepends(text)` → `.taskNames`, `.evaluate({ task: { phase, ... } })`.
 * - event environment: `eventEnvironment({ payload, headers, discriminator, namespace })`,
 *   `eventMetadataFromHeaders(rawHeaders)`.
 *
 * Every failure caused by an expression or its input is an `ExprError` (`.code`, `.reason`,
 * `.line`, `.column`; the message shows a caret under the offending token). Compiled objects
 * are immutable and safe to share and to evaluate concurrently.
 */

export { ExprError, isExprError, type ExprErrorCode } from './errors.js';
export { DEFAULT_LIMITS, type ExprLimits } from './limits.js';
export { compile, CompiledExpression, type CompileOptions, type ExprEnv } from './compile.js';
export { compileBoolean, compileString, compileValue, valueToText, type TypedExpression, type ValueOptions } from './contracts.js';
export { compileTemplate, renderTemplate, CompiledTemplate, type TemplateOptions } from './template.js';
export { expandVars, type FlatVars } from './vars.js';
export { compileWhen, evaluateWhen, type CompiledWhen } from './when.js';
export { compileDepends, taskResult, TASK_RESULTS, type CompiledDepends, type DependencyState, type TaskResult } from './depends.js';
export { eventEnvironment, eventMetadata, eventMetadataFromHeaders, eventValueText, type EventInput, type RawHeaders } from './event.js';
export { runCase, runCasesText, evaluateCase, CASE_KINDS, type CaseKind, type CaseResult, type ExprCase } from './cases.js';
export { describeValue } from './format.js';
export { decode, Regex, type RegexMeter } from './regex/vm.js';
