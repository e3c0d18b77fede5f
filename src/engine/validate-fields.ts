/**
 * No field is silently ignored (issue 18 §5): a workflow is walked along the records of
 * src/api/supported-fields.ts and every field that plugflow does not implement is refused,
 * naming its full path: `spec.templates[main].priority is not supported yet: the peer sets it
 * as the step pod's spec.priority, …`. Fields no record lists are refused as unknown.
 *
 * Lists of named records are shown by name (`spec.templates[main]`, `steps[0][a]`,
 * `dag.tasks[b]`), like every other validation message; unnamed elements by index.
 *
 * Templates that the workflow reaches in (Cluster)WorkflowTemplates through `templateRef` are
 * walked too, named by their resource (`WorkflowTemplate/shared spec.templates[build].daemon`),
 * since running them would ignore the field just the same.
 */
import { bothNamesDetail, specNameIn } from '../api/index.js';
import { fieldRule, type FieldShape, type RecordName } from '../api/index.js';
import { isJsonObject as isObject, type Template, type TemplateRef, type WorkflowSpec, type WorkflowStep } from '../api/index.js';
import type { TemplateResolver, TemplateReference } from './template-resolver.js';

type Add = (field: string, detail: string) => void;

/** The message for a refused field (the field's path comes first, as in every FieldError). */
export function refusedDetail(reason: string): string {
  return `is not supported yet: ${reason}`;
}

/** The message for a field no record lists. */
export function unknownDetail(record: string): string {
  return `is not a field plugflow knows (${record}); check its spelling or remove it`;
}

/** Refused and unknown fields of `value`, read as `record`, found at `path`. */
export function checkFields(value: unknown, record: RecordName, path: string, add: Add): void {
  if (!isObject(value)) return; // wrong shapes are the CRD schema's and the validator's business
  for (const key of Object.keys(value)) {
    const at = `${path}.${key}`;
    // The peer's name of a field (s3 for vendorAObject, src/api/peer-names.ts) is that field.
    const spec = specNameIn(record, key);
    if (spec !== undefined && Object.hasOwn(value, spec)) {
      add(at, bothNamesDetail(spec));
      continue;
    }
    const rule = fieldRule(record, spec ?? key);
    if (!rule) add(at, unknownDetail(record));
    else if (rule.status === 'refused') add(at, refusedDetail(rule.reason));
    else if (rule.record) checkShaped(value[key], rule.record, rule.shape ?? 'one', at, add);
  }
}

function checkShaped(value: unknown, record: RecordName, shape: FieldShape, path: string, add: Add): void {
  if (shape === 'one') return checkFields(value, record, path, add);
  if (shape === 'map') {
    if (!isObject(value)) return;
    for (const [k, v] of Object.entries(value)) checkFields(v, record, `${path}.${k}`, add);
    return;
  }
  if (!Array.isArray(value)) return;
  value.forEach((item, i) => {
    if (shape === 'groups') checkShaped(item, record, 'list', `${path}[${i}]`, add);
    else checkFields(item, record, `${path}[${elementKey(item, i)}]`, add);
  });
}

function elementKey(item: unknown, i: number): string | number {
  const name = isObject(item) ? item.name : undefined;
  return typeof name === 'string' && name !== '' ? name : i;
}

/** The workflow-level fields of `spec` (templates included) at `spec`. */
export function checkSpecFields(spec: WorkflowSpec, add: Add): void {
  checkFields(spec, 'WorkflowSpec', 'spec', add);
}

/**
 * Templates reached through `templateRef` from the workflow's own templates (and the exit hook),
 * transitively, each walked once; the workflow's own ones are walked by checkSpecFields.
 */
export function checkReferencedTemplates(spec: WorkflowSpec, resolver: TemplateResolver, add: Add): void {
  if (!isObject(spec)) return;
  const seen = new Set<string>();
  const own: unknown[] = Array.isArray(spec.templates) ? spec.templates : [];
  const pending: Array<{ t: Template; scope: string | undefined }> = own
    .filter(isObject)
    .map((t) => ({ t: t as unknown as Template, scope: undefined }));
  const follow = (ref: TemplateReference, scope: string | undefined): void => {
    if (!ref.templateRef && scope === undefined) return; // the workflow's own: already walked
    if (ref.inline) return; // walked with the template that holds it
    const res = resolver.resolve(ref, scope);
    if (!res.ok || res.value.scope === undefined) return; // a missing one is reported elsewhere
    const key = `${res.value.scope} spec.templates[${res.value.template.name}]`;
    if (seen.has(key)) return;
    seen.add(key);
    checkFields(res.value.template, 'Template', key, add);
    pending.push({ t: res.value.template, scope: res.value.scope });
  };
  for (const hook of isObject(spec.hooks) ? Object.values(spec.hooks) : []) {
    if (isObject(hook) && isObject(hook.templateRef)) follow({ templateRef: hook.templateRef as unknown as TemplateRef }, undefined);
  }
  while (pending.length > 0) {
    const { t, scope } = pending.pop()!;
    for (const site of callSites(t)) {
      const ref: TemplateReference = {};
      if (site.template !== undefined) ref.template = site.template;
      if (site.templateRef) ref.templateRef = site.templateRef;
      follow(ref, scope);
      if (site.onExit !== undefined) follow({ template: site.onExit }, scope);
      for (const hook of Object.values(site.hooks ?? {}))
        follow(
          {
            ...(hook.template !== undefined ? { template: hook.template } : {}),
            ...(hook.templateRef ? { templateRef: hook.templateRef } : {}),
          },
          scope,
        );
      if (isObject(site.inline)) pending.push({ t: site.inline as Template, scope });
    }
  }
}

/** The steps and DAG tasks of a template. */
function callSites(t: Template): WorkflowStep[] {
  const out: WorkflowStep[] = [];
  if (Array.isArray(t.steps))
    for (const group of t.steps as unknown[]) if (Array.isArray(group)) out.push(...(group.filter(isObject) as WorkflowStep[]));
  const tasks: unknown = isObject(t.dag) ? t.dag.tasks : undefined;
  if (Array.isArray(tasks)) out.push(...(tasks.filter(isObject) as WorkflowStep[]));
  return out;
}
