/**
 * Workflow-wide template settings: `spec.templateDefaults` and `spec.retryStrategy`.
 *
 * The peer merges `templateDefaults` under every template it runs, the template's own fields
 * winning: objects are merged key by key (recursively), anything else — strings, numbers, lists —
 * is taken from the template when it sets it. A kind section of the defaults (`container`,
 * `script`, `steps`, …) is merged only into a template of that same kind: laying a `container`
 * default under a `steps` template would give it two kinds, which the peer then rejects; here the
 * section simply applies to the templates it fits (said in the engine README). Likewise the pod
 * settings (`nodeSelector`, `sidecars`, … POD_FIELDS) reach only templates that make a pod, and
 * `serviceAccountName` only those and resource templates: on the others they would be refused.
 *
 * `spec.retryStrategy` is the retry strategy of every template that has none of its own (after
 * the defaults are merged, so `templateDefaults.retryStrategy` comes first), as in the peer.
 *
 * Applied once per template object (memoised by identity), to the workflow's own templates and
 * to those of the (Cluster)WorkflowTemplates it refers to, so validation and execution see the
 * same templates.
 */
import { makesPod, POD_FIELDS, setOwn, TEMPLATE_KINDS, type RetryStrategy, type Template, type WorkflowSpec } from '../api/index.js';

export type TemplateDecorator = (template: Template) => Template;

/** The decorator for `spec`, or undefined when the spec sets neither field. */
export function templateDecorator(spec: Pick<WorkflowSpec, 'templateDefaults' | 'retryStrategy'>): TemplateDecorator | undefined {
  const defaults = spec.templateDefaults;
  const retry = spec.retryStrategy;
  if (!defaults && !retry) return undefined;
  const done = new WeakMap<Template, Template>();
  return (template) => {
    const hit = done.get(template);
    if (hit) return hit;
    const out = withWorkflowDefaults(template, defaults, retry);
    done.set(template, out);
    return out;
  };
}

/** `template` with `defaults` merged under it and `retry` as its retryStrategy when it has none. */
export function withWorkflowDefaults(
  template: Template,
  defaults: Partial<Template> | undefined,
  retry: RetryStrategy | undefined,
): Template {
  let out: Template = template;
  if (defaults) {
    const kinds = new Set<string>(TEMPLATE_KINDS);
    // Pod settings reach only templates that make a pod (a steps template has none to set them on).
    const podless = !makesPod(template);
    const skip = new Set<string>(podless ? [...POD_FIELDS, ...(template.resource ? [] : ['serviceAccountName'])] : []);
    const applicable: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(defaults)) {
      if (k === 'name' || v === undefined || v === null || skip.has(k)) continue;
      if (kinds.has(k) && (template as unknown as Record<string, unknown>)[k] == null) continue;
      setOwn(applicable, k, v);
    }
    out = mergeUnder(applicable, template) as Template;
  }
  if (retry && !out.retryStrategy) out = { ...out, retryStrategy: retry };
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `over` laid on `base`: objects merged by key recursively, every other value of `over` wins. */
function mergeUnder(base: unknown, over: unknown): unknown {
  if (over === undefined || over === null) return base;
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) setOwn(out, k, v);
  for (const [k, v] of Object.entries(over)) setOwn(out, k, Object.hasOwn(base, k) ? mergeUnder(base[k], v) : v);
  return out;
}
