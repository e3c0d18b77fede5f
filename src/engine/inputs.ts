/**
 * Binding a template's declared inputs to the arguments of a call.
 *
 * For each declared input parameter the value is, in order: the call's argument of the same
 * name (or the ConfigMap key its `valueFrom.configMapKeyRef` names), the input's own
 * `valueFrom.configMapKeyRef`, its `value`, its `default` (or `valueFrom.default`). None of those → the call fails, naming the
 * template and parameter. A value outside `enum` fails the same way. Arguments the template does
 * not declare are ignored (as in the peer system).
 *
 * The parameter's own `value`/`default` may hold tags (`{{workflow.parameters.x}}`,
 * `{{=jsonpath(workflow.parameters.config, '$.a')}}`): they are rendered in the template's scope
 * as the peer renders them — workflow variables, what the call site defines (`steps.name`,
 * `tasks.name`, `node.name`, `pod.name` of a pod template without retries) — plus the inputs
 * declared before it. The leaf-template policy applies: tags of engine variables and `{{=…}}`
 * must resolve, except those only known per attempt (`retries`, `lastRetry.*`, a retried pod's
 * `pod.name`), which stay as written, like tags that name no engine variable. An argument is
 * not rendered again (the caller rendered it in its own scope).
 *
 * The bound inputs are stored on the node (`node.inputs`), so later reconciles reuse them instead
 * of evaluating the arguments again.
 */
import { anyStringToString, isAnyString, type Arguments, type Inputs, type Parameter } from '../api/index.js';
import { renderTemplate } from '../expr/index.js';
import { artifactVariable, bindInputArtifacts } from './artifacts.js';
import { ENGINE_PREFIXES, renderString, tagNames } from './expressions.js';
import { configMapValue, type ParameterConfigMaps } from './parameter-config-maps.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

export type BoundInputs = { ok: true; inputs: Inputs } | { ok: false; error: string };

/**
 * @param declared the template's `inputs`
 * @param args the call's arguments, already substituted
 * @param where how to name the template in messages, e.g. `spec.templates[main]`
 * @param vars the scope the parameter's own `value`/`default` tags are rendered in
 * @param absent arguments left out because they only referenced an absent output
 */
export function bindInputs(
  declared: Inputs | undefined,
  args: Arguments | undefined,
  where: string,
  vars: Vars = {},
  absent: readonly string[] = [],
  configMaps: ParameterConfigMaps = {},
): BoundInputs {
  const parameters: Parameter[] = [];
  const scope: Vars = { ...vars };
  for (const p of declared?.parameters ?? []) {
    const field = `${where}.inputs.parameters[${p.name}]`;
    const arg = args?.parameters?.find((a) => a.name === p.name);
    let raw: unknown = arg?.value;
    // configMapKeyRef (parameter-config-maps.ts): the argument's, then the input's own.
    for (const [ref, hasDefault, at] of [
      [arg?.valueFrom?.configMapKeyRef, arg?.valueFrom?.default !== undefined, `${where}.arguments.parameters[${p.name}]`],
      [
        arg ? undefined : p.valueFrom?.configMapKeyRef,
        p.value !== undefined || p.default !== undefined || p.valueFrom?.default !== undefined,
        field,
      ],
    ] as const) {
      if (raw !== undefined || !ref) continue;
      const found = configMapValue(configMaps, ref, at, hasDefault);
      if (!found.ok) return found;
      raw = found.value;
    }
    if (raw === undefined && arg?.valueFrom?.default !== undefined) raw = arg.valueFrom.default;
    let own: 'value' | 'default' | undefined;
    if (raw === undefined && p.value !== undefined) [raw, own] = [p.value, 'value'];
    if (raw === undefined && p.default !== undefined) [raw, own] = [p.default, 'default'];
    if (raw === undefined && p.valueFrom?.default !== undefined) [raw, own] = [p.valueFrom.default, 'default'];
    if (raw === undefined && absent.includes(p.name)) {
      return {
        ok: false,
        error: `${field}: the argument references an output of a skipped or omitted step that declares no default (give the output a valueFrom.default or this parameter a default)`,
      };
    }
    if (raw === undefined) {
      return { ok: false, error: `${field}: no value supplied (pass an argument named "${p.name}" or give the parameter a default)` };
    }
    let value: string;
    try {
      value = anyStringToString(raw, field);
      if (own !== undefined) value = renderOwnValue(value, scope, `${field}.${own}`);
    } catch (err) {
      return { ok: false, error: errorMessage(err) };
    }
    scope[`inputs.parameters.${p.name}`] = value;
    const enumError = checkEnum(p, value, field);
    if (enumError) return { ok: false, error: enumError };
    const bound: Parameter = { name: p.name, value };
    if (p.description !== undefined) bound.description = p.description;
    parameters.push(bound);
  }
  const inputs: Inputs = {};
  if (parameters.length > 0) inputs.parameters = parameters;
  const artifacts = bindInputArtifacts(declared?.artifacts, args, where);
  if (!artifacts.ok) return artifacts;
  if (artifacts.artifacts.length > 0) inputs.artifacts = artifacts.artifacts;
  return { ok: true, inputs };
}

/** Known only per attempt, after inputs are bound: left as written in an input's own value. */
const PER_ATTEMPT = /^(retries$|lastRetry\.|pod\.name$)/;

/** Renders an input's own `value`/`default` (see the policy above). */
function renderOwnValue(text: string, vars: Vars, field: string): string {
  if (!text.includes('{{')) return text;
  let out: string;
  try {
    out = renderTemplate(text, vars, { leaveUnresolved: true }, field);
  } catch {
    return renderString(text, vars, field); // throws the error, naming the field
  }
  if (!out.includes('{{')) return out;
  const mustResolve = out.includes('{{=') || tagNames(out).some((n) => ENGINE_PREFIXES.test(n) && !PER_ATTEMPT.test(n));
  return mustResolve ? renderString(text, vars, field) : out;
}

/**
 * An error message when `value` is not among the parameter's `enum`, or undefined. Entries that
 * are not AnyString (a list, an object) allow nothing; the validator names them.
 */
export function checkEnum(p: Parameter, value: string, field: string): string | undefined {
  if (!Array.isArray(p.enum) || p.enum.length === 0) return undefined;
  const allowed = p.enum.filter(isAnyString).map((e) => anyStringToString(e));
  if (allowed.includes(value)) return undefined;
  return `${field}: value ${JSON.stringify(value)} is not one of the allowed values ${JSON.stringify(allowed)}`;
}

/**
 * `inputs.parameters.<name>` variables (and `inputs.parameters` as a JSON list) of bound inputs, and
 * `inputs.artifacts.<name>` (the bound record as JSON, so a steps or DAG template can pass its input on).
 */
export function inputVariables(inputs: Inputs | undefined): Record<string, string> {
  const vars: Record<string, string> = {};
  const params = inputs?.parameters ?? [];
  for (const p of params) vars[`inputs.parameters.${p.name}`] = p.value === undefined ? '' : anyStringToString(p.value);
  for (const a of inputs?.artifacts ?? []) {
    vars[`inputs.artifacts.${a.name}`] = artifactVariable(a);
    if (a.path !== undefined) vars[`inputs.artifacts.${a.name}.path`] = a.path;
  }
  if (params.length > 0) {
    vars['inputs.parameters'] = JSON.stringify(
      params.map((p) => ({ name: p.name, value: p.value === undefined ? '' : anyStringToString(p.value) })),
    );
  }
  return vars;
}
