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
}

export interface ResolvedTemplate {
  template: Template;
  /** Where plain names inside `template` are looked up. */
  scope: string | undefined;
  /** Name shown on the node (undefined for inline templates without a name). */
  templateName: string | undefined;
  templateRef?: TemplateRef;
}

export type Resolution = { ok: true; value: ResolvedTemplate } | { ok: false; error: string };

/** Key of the resource a templateRef points into. */
export function templateRefKey(ref: TemplateRef): string {
  return templateSourceKey(ref.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate', ref.name);
}

export class TemplateResolver {
  private readonly own: Map<string, Template>;

  constructor(
    ownTemplates: readonly Template[],
    private readonly sources: Readonly<Record<string, TemplateSource>>,
  ) {
    this.own = new Map(ownTemplates.map((t) => [t.name, t]));
  }

  /** Resolves `ref` as seen from a template in `scope`. */
  resolve(ref: TemplateReference, scope: string | undefined): Resolution {
    if (ref.inline) {
      return { ok: true, value: { template: ref.inline, scope, templateName: ref.inline.name || undefined } };
    }
    if (ref.templateRef) {
      const key = templateRefKey(ref.templateRef);
      const source = this.sources[key];
      if (!source) return { ok: false, error: `${describeKey(key)} not found` };
      const template = source.templates.find((t) => t.name === ref.templateRef!.template);
      if (!template) return { ok: false, error: `template "${ref.templateRef.template}" not found in ${describeKey(key)}` };
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
    return this.sources[scope]?.templates.find((t) => t.name === name);
  }
}

/** `WorkflowTemplate/x` → `WorkflowTemplate "x"` for messages. */
export function describeKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : `${key.slice(0, slash)} "${key.slice(slash + 1)}"`;
}
