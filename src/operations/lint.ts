/**
 * lint: what would be wrong with a workflow if it were submitted — its shape, the fields plugflow
 * does not implement, and the engine's validation with every (Cluster)WorkflowTemplate it refers
 * to — without storing anything. The server's create check (src/server/workflow-validation.ts),
 * `POST /api/v1/workflows/{ns}/lint` and `plugflow lint` all run this one function; they differ
 * only in where templates come from (the caller's rights, or the files given).
 */
import type { Workflow, WorkflowSpec } from '../api/index.js';
import { fetchTemplateSources, type SourceFetch } from '../engine/index.js';
import { validateWorkflow } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { CLUSTER_WORKFLOW_TEMPLATES, WORKFLOW_TEMPLATES } from '../kube/resource.js';
import { workflowShapeProblems } from '../api/index.js';

/** Most templates fetched for one workflow (a guard against reference loops and fan-out). */
export const MAX_TEMPLATE_SOURCES = 32;

/** The workflow's problems, each naming its field; empty when it would be accepted. */
export async function workflowProblems(wf: Workflow, fetch: SourceFetch): Promise<string[]> {
  const shape = workflowShapeProblems(wf);
  if (shape.length > 0) return shape.map((p) => p.message);
  const resolved = await fetchTemplateSources(wf, fetch, { maxSources: MAX_TEMPLATE_SOURCES });
  if (!resolved.ok) return [resolved.error];
  return validateWorkflow(wf, resolved.sources).map((i) => i.message);
}

/** Thrown by a fetch when a referenced template exists but is itself malformed. */
export class InvalidTemplateSource extends Error {}

/**
 * Templates read with `kube` (the caller's rights: one they may not read is their 403). A missing
 * one is left out, and the validator names the field that refers to it.
 */
export function clusterTemplates(kube: KubeClient, namespace: string): SourceFetch {
  return async (ref) => {
    const cluster = ref.kind === 'ClusterWorkflowTemplate';
    try {
      const t = cluster
        ? await kube.get<{ spec?: WorkflowSpec }>(CLUSTER_WORKFLOW_TEMPLATES, undefined, ref.name)
        : await kube.get<{ spec?: WorkflowSpec }>(WORKFLOW_TEMPLATES, namespace, ref.name);
      // Stored templates passed the API server's schema, but it keeps inline templates opaque.
      const problems = workflowShapeProblems({ spec: t.spec ?? {} });
      if (problems.length > 0) {
        throw new InvalidTemplateSource(
          `${ref.kind} ${cluster ? '' : `${namespace}/`}${ref.name}, which the workflow refers to, is invalid: ${problems.map((p) => p.message).join('; ')}`,
        );
      }
      return t.spec ?? {};
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
}

/** Templates given with the workflow (the same files), then `fallback` for the others. */
export function withLocalTemplates(local: { kind: string; name: string; spec: WorkflowSpec }[], fallback?: SourceFetch): SourceFetch {
  return async (ref) => local.find((t) => t.kind === ref.kind && t.name === ref.name)?.spec ?? (await fallback?.(ref));
}
