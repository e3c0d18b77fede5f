/**
 * Editing a WorkflowTemplate or CronWorkflow as YAML: the text to start from (the object as
 * stored, without its status and the API server's bookkeeping, but with its resourceVersion, so
 * saving a stale copy is refused instead of overwriting a newer one), reading the edited text
 * with the reader the CLI and the server use (src/yaml/kube-yaml.ts: as kubectl reads it), and
 * what to say when a save fails. Pure: tested beside.
 *
 * The text is written so that reader gives the object back unchanged: YAML 1.1 quoting (a string
 * `yes` or `on` stays quoted, not a boolean), and JSON should any value still not come back the
 * same.
 */
import { stringify } from 'yaml';
import { readYamlDocument } from '../../src/yaml/kube-yaml.js';

interface Stored {
  metadata?: Record<string, unknown>;
  status?: unknown;
  [k: string]: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function editableText(obj: Stored): string {
  const { status: _status, ...rest } = obj;
  const metadata = { ...(obj.metadata ?? {}) };
  delete metadata.managedFields;
  const edited = { ...rest, metadata };
  const text = stringify(edited, { version: '1.1' });
  try {
    if (same(readYamlDocument(text, 'the text'), edited)) return text;
  } catch {
    // not read back: JSON below
  }
  return `${JSON.stringify(edited, null, 2)}\n`;
}

/** The edited object, or why the text is not one. */
export function parseEdited(text: string): { object: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = readYamlDocument(text, 'the text', { what: 'one object' });
  } catch (err) {
    return { error: `The text is not YAML: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'The text must be one object (apiVersion, kind, metadata, spec).' };
  return { object: value as Record<string, unknown> };
}

export const CONFLICT =
  'It was changed meanwhile (saved by someone or something else since you loaded it): reload to get the current version, then make your change again.';

/**
 * What a failed save says, from the reply's status and the message api.ts's `explain` made of it:
 * a conflict as CONFLICT, anything else with the server's message (which names the field).
 */
export function saveFailure(status: number | undefined, message: string): { message: string; conflict: boolean } {
  if (status === 409) return { message: `${CONFLICT} (${message})`, conflict: true };
  return { message: `Not saved: ${message}`, conflict: false };
}
