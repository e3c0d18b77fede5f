/**
 * A template's `annotations` (the peer's template-level metadata). One key means something:
 * `workflows.plugflow.io/display-name` (the peer's `workflows.argoproj.io/display-name`). When a
 * node of the template starts, its value is rendered with what the template sees there — the
 * workflow's variables, the call site's (`steps.name`, `tasks.name`), `node.name`, `pod.name`
 * and the bound inputs — and becomes the node's `displayName` in the status, in place of the
 * step or task name (a retried node's attempts are then `<displayName>(<n>)`). Every tag must
 * resolve, and the result must be 2 to 63 letters, digits, `-` and `.`, starting and ending with
 * a letter or digit (the peer's rule); otherwise the node ends in Error saying why.
 *
 * Other keys: another `workflows.plugflow.io/` key is refused (a misspelt display-name would be
 * ignored without a word), as is the peer's own key (plugflow reads its prefix); any other key
 * is kept on the template as metadata only, as in the peer — it reaches no pod (pod annotations
 * are `metadata.annotations`).
 */
import { ANNOTATION_DISPLAY_NAME, LABEL_PREFIX, type Template } from '../api/index.js';
import { renderString } from './expressions.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** The peer's key of the display name; refused, naming plugflow's. */
export const PEER_DISPLAY_NAME = 'workflows.argoproj.io/display-name';

const DISPLAY_NAME = /^[a-zA-Z0-9][a-zA-Z0-9.-]{0,61}[a-zA-Z0-9]$/;

/** Why `value` cannot be a display name, or undefined when it can. */
export function displayNameProblem(value: string): string | undefined {
  if (DISPLAY_NAME.test(value)) return undefined;
  return `gives ${JSON.stringify(value)}, which is not a display name: 2 to 63 letters, digits, '-' and '.', starting and ending with a letter or digit`;
}

/** The annotations the validator refuses, and literal display names that could never be one. */
export function checkTemplateAnnotations(t: Template, where: string, add: (field: string, detail: string) => void): void {
  const annotations = t.annotations;
  if (annotations === undefined || annotations === null) return;
  for (const [key, value] of Object.entries(annotations)) {
    const field = `${where}.annotations.${key}`;
    if (typeof value !== 'string') add(field, `must be a string, got ${JSON.stringify(value)}`);
    else if (key === PEER_DISPLAY_NAME) add(field, `is the peer's key: plugflow reads ${ANNOTATION_DISPLAY_NAME}`);
    else if (key.startsWith(LABEL_PREFIX) && key !== ANNOTATION_DISPLAY_NAME)
      add(field, `is not a template annotation plugflow knows: the only one is ${ANNOTATION_DISPLAY_NAME}`);
    else if (key === ANNOTATION_DISPLAY_NAME && !value.includes('{{')) {
      const problem = displayNameProblem(value);
      if (problem) add(field, problem);
    }
  }
}

export type DisplayName = { ok: true; displayName: string | undefined } | { ok: false; error: string };

/**
 * The display name `template` gives its node, rendered with `vars`; undefined when it sets none.
 * `where` names the template in the error (`spec.templates[main]`).
 */
export function templateDisplayName(template: Template, vars: Vars | (() => Vars), where: string): DisplayName {
  const raw = template.annotations?.[ANNOTATION_DISPLAY_NAME];
  if (raw === undefined) return { ok: true, displayName: undefined };
  const field = `${where}.annotations.${ANNOTATION_DISPLAY_NAME}`;
  let value: string;
  try {
    value = renderString(String(raw), typeof vars === 'function' ? vars() : vars, field);
  } catch (err) {
    return { ok: false, error: errorMessage(err) };
  }
  const problem = displayNameProblem(value);
  return problem ? { ok: false, error: `${field} ${problem}` } : { ok: true, displayName: value };
}
