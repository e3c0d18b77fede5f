/**
 * Outputs of a step or task that never ran — Skipped (its `when` was false) or Omitted (its
 * `depends` was false) — as the peer resolves them since 3.7.16/4.0.7: every output parameter
 * whose template declares `valueFrom.default` reads as that default, so a consumer can still
 * run (`{{tasks.maybe.outputs.parameters.msg}}` → the default). Outputs without such a default
 * stay undefined: a reference to them fails naming the tag, as before.
 *
 * Nothing is written to the skipped node (it produced nothing); only its variables are filled.
 */
import { anyStringToString, type NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import type { TemplateReference } from './template-resolver.js';
import type { Vars } from './variables.js';

/**
 * `<prefix>.outputs.parameters.<p>` for the declared defaults of the template `ref` names, when
 * `node` was skipped or omitted and has no outputs of its own; `{}` otherwise.
 */
export function skippedOutputVariables(run: EngineRun, prefix: string, node: NodeStatus, ref: TemplateReference, scope: string | undefined): Vars {
  if (node.outputs || (node.phase !== 'Skipped' && node.phase !== 'Omitted')) return {};
  const res = run.templates.resolve(ref, scope);
  if (!res.ok) return {};
  const vars: Vars = {};
  for (const p of res.value.template.outputs?.parameters ?? []) {
    const fallback = p.valueFrom?.default;
    if (fallback === undefined) continue;
    try {
      vars[`${prefix}.outputs.parameters.${p.name}`] = anyStringToString(fallback);
    } catch {
      // not AnyString: the validator names it; nothing to offer here
    }
  }
  return vars;
}
