/**
 * Parameters read from ConfigMaps (`valueFrom.configMapKeyRef` on workflow arguments, call
 * arguments and template input parameters), as in the peer: only ConfigMaps of the workflow's
 * namespace labelled `workflows.plugflow.io/configmap-type: Parameter` are read — the label is
 * their owner's consent, so a workflow cannot read every ConfigMap the controller can. The
 * controller watches those through one label-selected informer and puts the ones a workflow
 * names into `Observations.parameterConfigMaps`; the engine only looks values up.
 *
 * A value is read each time it is bound: a workflow argument at every reconcile (as the peer
 * does), an input parameter once, when its node starts (node.inputs keeps it). Missing map or key:
 * the `default` (valueFrom.default, then the parameter's own default), else `""` when
 * `optional: true`, else an error naming the field, the ConfigMap and the label.
 */
import type { ConfigMapKeySelector, Template, WorkflowSpec } from '../api/index.js';
import { LABEL_CONFIGMAP_TYPE } from '../api/index.js';

/** The label value that makes a ConfigMap readable by configMapKeyRef parameters (the peer's). */
export const CONFIGMAP_TYPE_PARAMETER = 'Parameter';

/** Data of the parameter ConfigMaps a workflow names, by ConfigMap name (absent: not found or not labelled). */
export type ParameterConfigMaps = Readonly<Record<string, Readonly<Record<string, string>>>>;

export type ConfigMapValue = { ok: true; value: string | undefined } | { ok: false; error: string };

/**
 * The value `ref` names, or `value: undefined` when the map or key is missing and the caller has a
 * default to fall back to (`hasDefault`) or the reference is optional (then `""`).
 */
export function configMapValue(maps: ParameterConfigMaps, ref: ConfigMapKeySelector, field: string, hasDefault: boolean): ConfigMapValue {
  const name = typeof ref.name === 'string' ? ref.name : '';
  const data = Object.hasOwn(maps, name) ? maps[name] : undefined;
  const value = data && Object.hasOwn(data, ref.key) ? data[ref.key] : undefined;
  if (value !== undefined) return { ok: true, value };
  if (hasDefault) return { ok: true, value: undefined };
  if (ref.optional === true) return { ok: true, value: '' };
  const why = data
    ? `ConfigMap "${name}" has no key "${ref.key}"`
    : `ConfigMap "${name}" was not found in the workflow's namespace with the label ${LABEL_CONFIGMAP_TYPE}=${CONFIGMAP_TYPE_PARAMETER} (only such ConfigMaps are read)`;
  return { ok: false, error: `${field}.valueFrom.configMapKeyRef: ${why}, and the parameter has no default` };
}

/** The ConfigMaps a workflow's arguments and templates name in configMapKeyRef parameters, sorted. */
export function parameterConfigMapNames(spec: WorkflowSpec | undefined, templates: Iterable<Template>): string[] {
  const names = new Set<string>();
  const add = (ref: ConfigMapKeySelector | undefined): void => {
    if (typeof ref?.name === 'string' && ref.name !== '') names.add(ref.name);
  };
  for (const p of spec?.arguments?.parameters ?? []) add(p.valueFrom?.configMapKeyRef);
  const visit = (t: Template | undefined, depth: number): void => {
    if (!t || depth > 50) return;
    for (const p of t.inputs?.parameters ?? []) add(p.valueFrom?.configMapKeyRef);
    const sites = [...(t.steps ?? []).flatMap((g) => (Array.isArray(g) ? g : [])), ...(t.dag?.tasks ?? [])];
    for (const site of sites) {
      for (const p of site.arguments?.parameters ?? []) add(p.valueFrom?.configMapKeyRef);
      for (const hook of Object.values(site.hooks ?? {}))
        for (const p of hook.arguments?.parameters ?? []) add(p.valueFrom?.configMapKeyRef);
      visit(site.inline, depth + 1);
    }
  };
  for (const t of templates) visit(t, 0);
  return [...names].sort();
}
