/**
 * Validation of a workflow sent to `POST /api/v1/workflows/{namespace}`, before it is stored:
 * the (Cluster)WorkflowTemplates it refers to are read with the caller's identity (the engine's
 * resolver follows references transitively), then the engine's validator checks the whole.
 * A template the caller may not read is a 403; one that does not exist is left out, and the
 * validator names the field that refers to it.
 */
import type { Workflow, WorkflowSpec } from '../api/index.js';
import { fetchTemplateSources } from '../engine/template-sources.js';
import { validateWorkflow } from '../engine/validate.js';
import { badRequest } from './errors.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { CLUSTER_WORKFLOW_TEMPLATES, WORKFLOW_TEMPLATES } from '../kube/resource.js';
import { workflowShapeProblems } from './workflow-shape.js';

/** Most templates fetched for one validation (a guard against reference loops and fan-out). */
const MAX_SOURCES = 32;
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
  const resolved = await fetchTemplateSources(
    wf,
    async (ref) => {
      const cluster = ref.kind === 'ClusterWorkflowTemplate';
      try {
        const t = cluster
          ? await kube.get<{ spec?: WorkflowSpec }>(CLUSTER_WORKFLOW_TEMPLATES, undefined, ref.name)
          : await kube.get<{ spec?: WorkflowSpec }>(WORKFLOW_TEMPLATES, namespace, ref.name);
        // Stored templates passed the API server's schema, but it keeps inline templates opaque.
        const problems = workflowShapeProblems({ spec: t.spec ?? {} });
        if (problems.length > 0)
          throw badRequest(
            `${ref.kind} ${cluster ? '' : `${namespace}/`}${ref.name}, which the workflow refers to, is invalid: ${listProblems(problems.map((p) => p.message))}`,
          );
        return t.spec ?? {};
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    { maxSources: MAX_SOURCES },
  );
  if (!resolved.ok) throw badRequest(resolved.error);
  const sources = resolved.sources;
  const issues = validateWorkflow(wf, sources);
  if (issues.length > 0) {
    throw badRequest(`${subjectOf(namespace, wf)} is invalid: ${listProblems(issues.map((i) => i.message))}`);
  }
}
