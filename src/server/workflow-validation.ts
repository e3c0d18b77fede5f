/**
 * Validation of a workflow sent to `POST /api/v1/workflows/{namespace}`, before it is stored
 * (src/operations/lint.ts: the one check `lint` runs too): the (Cluster)WorkflowTemplates it
 * refers to are read with the caller's identity (the engine's resolver follows references
 * transitively), then the engine's validator checks the whole.
 * A template the caller may not read is a 403; one that does not exist is left out, and the
 * validator names the field that refers to it.
 */
import type { Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { clusterTemplates, InvalidTemplateSource, workflowProblems } from '../operations/index.js';
import { badRequest } from './errors.js';
/** Most problems listed in one reply (a hostile document can have thousands). */
const MAX_LISTED = 20;

/** `Workflow ns/name` (or `ns/prefix*`) for messages, from a workflow whose metadata may be malformed. */
export function subjectOf(namespace: string, wf: { metadata?: unknown }): string {
  const md = (typeof wf.metadata === 'object' && wf.metadata !== null ? wf.metadata : {}) as { name?: unknown; generateName?: unknown };
  const subject = typeof md.name === 'string' && md.name ? md.name : `${typeof md.generateName === 'string' ? md.generateName : ''}*`;
  return `Workflow ${namespace}/${subject}`;
}

/** Problems joined with "; ", the first MAX_LISTED of them. */
export function listProblems(messages: readonly string[]): string {
  const shown = messages.slice(0, MAX_LISTED).join('; ');
  return messages.length > MAX_LISTED ? `${shown}; and ${messages.length - MAX_LISTED} more` : shown;
}

/** `kube` acts as the caller, so the templates read are those the caller may read. */
export async function validateForCreate(kube: KubeClient, namespace: string, wf: Workflow): Promise<void> {
  let problems: string[];
  try {
    problems = await workflowProblems(wf, clusterTemplates(kube, namespace));
  } catch (err) {
    if (err instanceof InvalidTemplateSource) throw badRequest(err.message);
    throw err;
  }
  if (problems.length > 0) throw badRequest(`${subjectOf(namespace, wf)} is invalid: ${listProblems(problems)}`);
}
