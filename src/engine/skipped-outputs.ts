/**
 * Outputs of a step or task that never ran — Skipped (its `when` was false) or Omitted (its
 * `depends` was false) — as the peer resolves them since 3.7.16/4.0.7: every output parameter
 * whose template declares `valueFrom.default` reads as that default, so a consumer can still
 * run (`{{tasks.maybe.outputs.parameters.msg}}` → the default). An output without such a
 * default is *absent* (`null`, see Vars): inside `{{=…}}` it is `nil` (`?? 'fallback'` works); an
 * argument that is nothing but a reference to it counts as not supplied, so the consuming
 * input's own default applies (absentArguments); any other use fails naming the tag.
 *
 * Nothing is written to the skipped node (it produced nothing); only its variables are filled.
 */
import { anyStringToString, type Arguments, type NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import type { TemplateReference } from './template-resolver.js';
import type { Vars } from './variables.js';

/**
 * `<prefix>.outputs.parameters.<p>` for the declared defaults of the template `ref` names, when
 * `node` was skipped or omitted and has no outputs of its own; `{}` otherwise.
 */
export function skippedOutputVariables(
  run: EngineRun,
  prefix: string,
  node: NodeStatus,
  ref: TemplateReference,
  scope: string | undefined,
): Vars {
  if (node.outputs || (node.phase !== 'Skipped' && node.phase !== 'Omitted')) return {};
  const res = run.templates.resolve(ref, scope);
  if (!res.ok) return {};
  const vars: Vars = {};
  for (const p of res.value.template.outputs?.parameters ?? []) {
    const fallback = p.valueFrom?.default;
    if (fallback === undefined) {
      vars[`${prefix}.outputs.parameters.${p.name}`] = null;
      continue;
    }
    try {
      vars[`${prefix}.outputs.parameters.${p.name}`] = anyStringToString(fallback);
    } catch {
      // not AnyString: the validator names it; nothing to offer here
    }
  }
  return vars;
}

/**
 * Names of the argument parameters whose value is a single simple tag naming an absent value
 * (`value: "{{steps.maybe.outputs.parameters.msg}}"`): such an argument counts as not supplied.
 */
export function absentArguments(args: Arguments | undefined, vars: Vars): string[] {
  const out: string[] = [];
  for (const p of args?.parameters ?? []) {
    if (typeof p.value !== 'string') continue;
    const m = /^\{\{\s*([^=\s{}][^{}]*?)\s*\}\}$/.exec(p.value);
    if (m && Object.hasOwn(vars, m[1]!) && vars[m[1]!] === null) out.push(p.name);
  }
  return out;
}
