/**
 * The spec a workflow actually runs, and the WorkflowTemplates it needs.
 *
 * With `spec.workflowTemplateRef` the workflow runs the referenced template's spec with its own
 * fields laid over it: a field the workflow sets wins, argument parameters are merged by name (the
 * workflow's values win), templates are merged by name (the workflow's win). The merged templates
 * count as the workflow's own, so plain template names resolve against them.
 *
 * `missingTemplateSources` names the (Cluster)WorkflowTemplates still to look up; the one loop
 * that repeats it until nothing is missing (a fetched template may refer to others) is
 * template-sources.ts.
 */
import { setOwn, type Arguments, type Parameter, type Template, type WorkflowSpec, type Workflow } from '../api/index.js';
import { templateSourceKey, type TemplateSource, type TemplateSourceKind } from './contract.js';
import { describeKey, templateRefKey } from './template-resolver.js';
import { templateDecorator } from './template-defaults.js';

export type EffectiveSpec = { ok: true; spec: WorkflowSpec } | { ok: false; error: string };

export function effectiveSpec(workflow: Workflow, sources: Readonly<Record<string, TemplateSource>>): EffectiveSpec {
  const merged = mergedSpec(workflow, sources);
  if (!merged.ok) return merged;
  // spec.templateDefaults and spec.retryStrategy reach every own template (template-defaults.ts).
  const decorate = templateDecorator(merged.spec);
  if (!decorate || !merged.spec.templates) return merged;
  return { ok: true, spec: { ...merged.spec, templates: merged.spec.templates.map(decorate) } };
}

function mergedSpec(workflow: Workflow, sources: Readonly<Record<string, TemplateSource>>): EffectiveSpec {
  const own = workflow.spec ?? {};
  const ref = own.workflowTemplateRef;
  if (!ref) return { ok: true, spec: own };
  const key = templateSourceKey(ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate', ref.name);
  const source = sources[key];
  if (!source) return { ok: false, error: `spec.workflowTemplateRef: ${describeKey(key)} not found` };
  const base: WorkflowSpec = source.spec ?? {
    templates: source.templates,
    ...(source.entrypoint !== undefined ? { entrypoint: source.entrypoint } : {}),
    ...(source.arguments !== undefined ? { arguments: source.arguments } : {}),
  };
  const merged: WorkflowSpec = { ...base };
  for (const [k, v] of Object.entries(own) as Array<[keyof WorkflowSpec, unknown]>) {
    if (v !== undefined && k !== 'templates' && k !== 'arguments' && k !== 'workflowTemplateRef') {
      setOwn(merged, k, v);
    }
  }
  merged.templates = mergeByName(base.templates ?? source.templates, own.templates ?? []);
  const args = mergeArguments(base.arguments, own.arguments);
  if (args) merged.arguments = args;
  return { ok: true, spec: merged };
}

function mergeByName<T extends { name: string }>(base: readonly T[], over: readonly T[]): T[] {
  const out = [...base];
  for (const item of over) {
    const i = out.findIndex((b) => b.name === item.name);
    if (i >= 0) out[i] = item;
    else out.push(item);
  }
  return out;
}

function mergeArguments(base: Arguments | undefined, over: Arguments | undefined): Arguments | undefined {
  if (!base) return over;
  if (!over) return base;
  const parameters = mergeByName<Parameter>(base.parameters ?? [], over.parameters ?? []);
  return { ...base, ...over, parameters };
}

export interface SourceRef {
  kind: TemplateSourceKind;
  name: string;
}

/**
 * The (Cluster)WorkflowTemplates the workflow refers to (directly or through templates already
 * fetched) that are not in `sources` yet, without duplicates, in first-seen order.
 */
export function missingTemplateSources(workflow: Workflow, sources: Readonly<Record<string, TemplateSource>> = {}): SourceRef[] {
  const missing = new Map<string, SourceRef>();
  const seen = new Set<string>();
  const visitKey = (key: string, ref: SourceRef): void => {
    if (seen.has(key)) return;
    seen.add(key);
    const source = sources[key];
    if (!source) {
      missing.set(key, ref);
      return;
    }
    visitSpec(source.spec ?? { templates: source.templates });
  };
  const visitSpec = (spec: WorkflowSpec): void => {
    const wtr = spec.workflowTemplateRef;
    if (wtr) {
      const kind: TemplateSourceKind = wtr.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate';
      visitKey(templateSourceKey(kind, wtr.name), { kind, name: wtr.name });
    }
    for (const t of spec.templates ?? []) visitTemplate(t);
    for (const hook of Object.values(spec.hooks ?? {})) visitRef(hook.templateRef);
  };
  const visitRef = (ref: { name: string; clusterScope?: boolean } | undefined): void => {
    if (!ref) return;
    const kind: TemplateSourceKind = ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate';
    visitKey(templateRefKey({ ...ref, template: '' }), { kind, name: ref.name });
  };
  const visitTemplate = (t: Template): void => {
    const calls = [...(t.steps ?? []).flat(), ...(t.dag?.tasks ?? [])];
    for (const c of calls) {
      visitRef(c.templateRef);
      for (const hook of Object.values(c.hooks ?? {})) visitRef(hook.templateRef);
      if (c.inline) visitTemplate(c.inline);
    }
  };
  visitSpec(workflow.spec ?? {});
  return [...missing.values()];
}
