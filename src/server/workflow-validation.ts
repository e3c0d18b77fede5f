/**
 * Validation of a workflow sent to `POST /api/v1/workflows/{namespace}`, before it is stored:
 * the (Cluster)WorkflowTemplates it refers to are read with the caller's identity (repeating
 * while a fetched template refers to more), then the engine's validator checks the whole.
 * A template the caller may not read is a 403; one that does not exist is left out, and the
 * validator names the field that refers to it.
 */
import { GROUP, PLURAL, VERSION, type Workflow, type WorkflowSpec } from '../api/index.js';
import { templateSourceKey, type TemplateSource } from '../engine/contract.js';
import { missingTemplateSources } from '../engine/effective-spec.js';
import { validateWorkflow } from '../engine/validate.js';
import { badRequest } from './errors.js';
import { KubeApiError, resourcePath, type Identity, type KubeRest } from './kube-rest.js';

/** Most templates fetched for one validation (a guard against reference loops and fan-out). */
const MAX_SOURCES = 32;

export async function validateForCreate(kube: KubeRest, identity: Identity, namespace: string, wf: Workflow): Promise<void> {
  const sources: Record<string, TemplateSource> = {};
  const absent = new Set<string>();
  for (let fetched = 0; ; ) {
    const missing = missingTemplateSources(wf, sources).filter((r) => !absent.has(templateSourceKey(r.kind, r.name)));
    if (missing.length === 0) break;
    for (const ref of missing) {
      if (++fetched > MAX_SOURCES) throw badRequest(`workflow refers to more than ${MAX_SOURCES} templates`);
      const key = templateSourceKey(ref.kind, ref.name);
      const cluster = ref.kind === 'ClusterWorkflowTemplate';
      try {
        const t = await kube.call<{ spec?: WorkflowSpec }>({
          method: 'GET',
          path: cluster
            ? resourcePath(GROUP, VERSION, PLURAL.clusterWorkflowTemplate, undefined, ref.name)
            : resourcePath(GROUP, VERSION, PLURAL.workflowTemplate, namespace, ref.name),
          identity,
        });
        const spec = t.spec ?? {};
        sources[key] = { templates: spec.templates ?? [], entrypoint: spec.entrypoint, arguments: spec.arguments, spec };
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 404) absent.add(key);
        else throw err;
      }
    }
  }
  const issues = validateWorkflow(wf, sources);
  if (issues.length > 0) {
    const subject = wf.metadata?.name ?? `${wf.metadata?.generateName ?? ''}*`;
    throw badRequest(`Workflow ${namespace}/${subject} is invalid: ${issues.map((i) => i.message).join('; ')}`);
  }
}
