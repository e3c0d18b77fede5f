/**
 * Computing a node's outputs from what the template declares.
 *
 * Each declared output parameter gets its value from the first source that applies:
 *   - `valueFrom.path`: the value the pod read from that file (PodObservation.outputs.parameters,
 *     by parameter name) — container and script templates;
 *   - `valueFrom.supplied`: the value given when the suspend node was resumed;
 *   - `valueFrom.jsonPath` / `valueFrom.jqFilter`: what the resource runner read from the object;
 *   - `valueFrom.parameter`: a `{{steps.…}}`/`{{tasks.…}}` reference, substituted;
 *   - `valueFrom.expression`: an expression over the same variables;
 *   - `value`: a literal (substituted);
 *   - an observed value of the same name (what a plugin or http task reported);
 * and when that source has nothing, `valueFrom.default` or the parameter's `default`. With no value
 * and no default the node fails, naming the template and parameter. A `parameter` reference or an
 * `expression` that fails also falls back to `valueFrom.default` (as the peer does), so a steps or
 * DAG template whose producing step was skipped still ends with its outputs.
 */
import { anyStringToString, type Artifact, type Outputs, type Parameter } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';
import { collectOutputArtifacts } from './artifacts.js';

/** Substitution and evaluation over the caller's variables (see expressions.ts). */
export interface ValueSource {
  render(text: string, field: string): string;
  evaluate(expression: string, field: string): string;
}

export type CollectedOutputs = { ok: true; outputs: Outputs } | { ok: false; error: string };

/**
 * @param declared the template's `outputs`
 * @param observed what the pod or agent reported (result, exitCode, parameters by name)
 * @param values variables for `parameter`/`expression`/`value` sources
 * @param where how to name the template in messages, e.g. `spec.templates[main]`
 */
export function collectOutputs(
  declared: Outputs | undefined,
  observed: Outputs | undefined,
  values: ValueSource,
  where: string,
  produced?: (a: Artifact) => boolean,
): CollectedOutputs {
  const outputs: Outputs = {};
  if (observed?.result !== undefined) outputs.result = observed.result;
  if (observed?.exitCode !== undefined) outputs.exitCode = String(observed.exitCode);
  const parameters: Parameter[] = [];
  for (const p of declared?.parameters ?? []) {
    const field = `${where}.outputs.parameters[${p.name}]`;
    let value: string | undefined;
    try {
      value = valueOf(p, observed, values, field);
    } catch (err) {
      // As the peer: a `valueFrom.default` also covers a `parameter` reference that cannot be
      // resolved (a skipped step's output) and an `expression` that fails.
      const aggregating = p.valueFrom?.parameter !== undefined || p.valueFrom?.expression !== undefined;
      if (!aggregating || p.valueFrom?.default === undefined) return { ok: false, error: errorMessage(err) };
    }
    if (value === undefined) {
      const fallback = p.valueFrom?.default ?? p.default;
      if (fallback === undefined) return { ok: false, error: `${field}: ${missingReason(p)} and there is no default` };
      try {
        value = anyStringToString(fallback, field);
      } catch (err) {
        return { ok: false, error: errorMessage(err) };
      }
    }
    const out: Parameter = { name: p.name, value };
    if (p.globalName) out.globalName = p.globalName;
    parameters.push(out);
  }
  if (parameters.length > 0) outputs.parameters = parameters;
  const artifacts = collectOutputArtifacts(declared?.artifacts, observed?.artifacts, values, where, produced);
  if (!artifacts.ok) return artifacts;
  if (artifacts.artifacts.length > 0) outputs.artifacts = artifacts.artifacts;
  return { ok: true, outputs };
}

function valueOf(p: Parameter, observed: Outputs | undefined, values: ValueSource, field: string): string | undefined {
  const seen = observed?.parameters?.find((o) => o.name === p.name)?.value;
  const vf = p.valueFrom;
  if (vf?.path !== undefined || vf?.supplied !== undefined || vf?.jsonPath !== undefined || vf?.jqFilter !== undefined) {
    return seen === undefined ? undefined : anyStringToString(seen, field);
  }
  if (vf?.parameter !== undefined) return values.render(vf.parameter, `${field}.valueFrom.parameter`);
  if (vf?.expression !== undefined) return values.evaluate(vf.expression, `${field}.valueFrom.expression`);
  if (p.value !== undefined) return values.render(anyStringToString(p.value, field), `${field}.value`);
  return seen === undefined ? undefined : anyStringToString(seen, field);
}

function missingReason(p: Parameter): string {
  if (p.valueFrom?.path !== undefined) return `the pod produced no value at path ${JSON.stringify(p.valueFrom.path)}`;
  if (p.valueFrom?.supplied !== undefined) return 'no value was supplied on resume';
  return 'no value was produced';
}

/** The output artifacts that carry a `globalName`, as `[globalName, record]`. */
export function globalArtifacts(outputs: Outputs | undefined): Array<[string, Artifact]> {
  return (outputs?.artifacts ?? []).filter((a) => a.globalName).map((a) => [a.globalName!, a]);
}

/** The declared output parameters that carry a `globalName`, as `[globalName, value]`. */
export function globalOutputs(outputs: Outputs | undefined): Array<[string, string]> {
  return (outputs?.parameters ?? [])
    .filter((p) => p.globalName && p.value !== undefined)
    .map((p) => [p.globalName!, anyStringToString(p.value!)]);
}
