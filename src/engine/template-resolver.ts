/**
 * Finding the template a step, task or hook runs: by name (`template`), from a
 * WorkflowTemplate/ClusterWorkflowTemplate (`templateRef`), or written in place (`inline`).
 *
 * A template taken from a WorkflowTemplate refers to other templates *of that WorkflowTemplate*
 * by plain name, so every resolution carries a scope: `undefined` for the workflow's own
 * templates, or the source key (`WorkflowTemplate/<name>`) of the resource it came from.
 */
import type { Template, TemplateRef } from '../api/index.js';
import { templateSourceKey, type TemplateSource } from './contract.js';

/** The three ways a step, task, hook or the entrypoint names what to run. */
export interface TemplateReference {
  template?: string;
  templateRef?: TemplateRef;
  inline?: Template;
  /**
   * Name given to an `inline` template that has none: the step's or task's name (as the peer
   * does), so every message, pod and agent log names it instead of printing `undefined`.
   */
  inlineName?: string;
  /** Where the inline template is written, for messages: `spec.templates[main].steps[0][a].inline`. */
  inlineWhere?: string;
}

export interface ResolvedTemplate {
  template: Template;
  /** Where plain names inside `template` are looked up. */
  scope: string | undefined;
  /** Name shown on the node and in the pod name (undefined for inline templates without a name). */
  templateName: string | undefined;
  /** Whether the template was written in place (`inline`); `template.name` is then always set. */
  inline?: boolean;
  /** TemplateReference.inlineWhere of an inline template. */
  inlineWhere?: string;
  templateRef?: TemplateRef;
}

export type Resolution = { ok: true; value: ResolvedTemplate } | { ok: false; error: string };

/** Key of the resource a templateRef points into. */
export function templateRefKey(ref: TemplateRef): string {
  return templateSourceKey(ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate', ref.name);
}

/** Name of an inline template when neither it nor its call site has one. */
export const INLINE_NAME = 'inline';

export class TemplateResolver {
  private readonly own: Map<string, Template>;

  constructor(
    ownTemplates: readonly Template[],
    private readonly sources: Readonly<Record<string, TemplateSource>>,
    /** spec.templateDefaults / spec.retryStrategy, for templates of referred WorkflowTemplates (template-defaults.ts). */
    private readonly decorate: (t: Template) => Template = (t) => t,
  ) {
    this.own = new Map(ownTemplates.map((t) => [t.name, t]));
  }

  /** Resolves `ref` as seen from a template in `scope`. */
  resolve(ref: TemplateReference, scope: string | undefined): Resolution {
    if (ref.inline) {
      const template = this.decorate(ref.inline.name ? ref.inline : { ...ref.inline, name: ref.inlineName || INLINE_NAME });
      const value: ResolvedTemplate = { template, scope, templateName: ref.inline.name || undefined, inline: true };
      if (ref.inlineWhere) value.inlineWhere = ref.inlineWhere;
      return { ok: true, value };
    }
    if (ref.templateRef) {
      const key = templateRefKey(ref.templateRef);
      const source = this.sources[key];
      if (!source) return { ok: false, error: `${describeKey(key)} not found` };
      const found = source.templates.find((t) => t.name === ref.templateRef!.template);
      if (!found) return { ok: false, error: `template "${ref.templateRef.template}" not found in ${describeKey(key)}` };
      const template = this.decorate(found);
      return { ok: true, value: { template, scope: key, templateName: template.name, templateRef: ref.templateRef } };
    }
    if (ref.template !== undefined) {
      const template = this.byName(ref.template, scope);
      if (!template) {
        return { ok: false, error: `template "${ref.template}" not found${scope ? ` in ${describeKey(scope)}` : ''}` };
      }
      return { ok: true, value: { template, scope, templateName: template.name } };
    }
    return { ok: false, error: 'one of template, templateRef or inline is required' };
  }

  private byName(name: string, scope: string | undefined): Template | undefined {
    if (scope === undefined) return this.own.get(name);
    const found = this.sources[scope]?.templates.find((t) => t.name === name);
    return found && this.decorate(found);
  }
}

/** `WorkflowTemplate/x` → `WorkflowTemplate "x"` for messages. */
export function describeKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : `${key.slice(0, slash)} "${key.slice(slash + 1)}"`;
}
