/**
 * Which kind a template is. Every consumer (engine, controller, agent) needs the one kind section
 * of a template; this is the single place that finds it and explains the mistake when there is
 * none or more than one.
 */
import { TEMPLATE_KINDS, type InlineTemplate, type Template, type TemplateKind } from './template.js';
import { FieldError } from './validation/field-error.js';
import type { FieldRef } from './validation/field-path.js';

/** The kind section a template has; throws a FieldError naming `field` unless there is exactly one. */
export function templateKindOf(template: Template | InlineTemplate, field: FieldRef = 'template'): TemplateKind {
  const present = TEMPLATE_KINDS.filter((k) => (template as Record<string, unknown>)[k] != null);
  const allowed = TEMPLATE_KINDS.join(', ');
  if (present.length === 1) return present[0]!;
  if (present.length === 0) throw new FieldError(field, `has no kind: set exactly one of ${allowed}`);
  throw new FieldError(field, `has ${present.length} kinds (${present.join(', ')}): set exactly one of ${allowed}`);
}

/** The kinds whose node is a step pod (build-pod.ts); the others make none. */
export const POD_KINDS: readonly TemplateKind[] = ['container', 'script', 'containerSet', 'data'];

/**
 * Template fields that shape the step pod, so they mean nothing on a kind without one.
 * `serviceAccountName` is not here: resource templates act with it too.
 */
export const POD_FIELDS = [
  'initContainers',
  'sidecars',
  'volumes',
  'nodeSelector',
  'affinity',
  'tolerations',
  'securityContext',
  'schedulerName',
  'priorityClassName',
  'hostAliases',
  'podSpecPatch',
  'podResources',
  'resourceClaims',
  'metadata',
  'automountServiceAccountToken',
  'archiveLocation',
] as const;

/** Whether the template's node runs as a step pod. */
export function makesPod(template: Template | InlineTemplate): boolean {
  return POD_KINDS.some((k) => (template as Record<string, unknown>)[k] != null);
}
