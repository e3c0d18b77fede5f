/**
 * A workflow created right after the (Cluster)WorkflowTemplate it refers to — `kubectl apply -f
 * template.yaml -f workflow.yaml`, or a test — can reach the controller before the template's own
 * watch event does: the two informers are separate watches. The engine then finds no such template
 * and fails the workflow with "… not found", although the template exists. So before the engine
 * runs, a template the caches lack is read from the API server: if it is there, the caches are
 * behind and the workflow waits for them (a requeue), for a bounded time after its creation.
 */
import { fetchTemplateSources, resolveTemplateSources, type SourceFetch, type SourceLookup } from '../engine/index.js';
import type { Workflow } from '../api/index.js';

/** How long after its creation a workflow waits for the caches to show the templates it names. */
export const TEMPLATE_LAG_LIMIT_MS = 30_000;
/** How soon a waiting workflow is looked at again. */
export const TEMPLATE_LAG_RETRY_MS = 250;

/**
 * The templates (`WorkflowTemplate lib`) the workflow refers to, transitively, that the caches
 * (`cached`) do not hold but `fetch` (the API server) finds. Empty — after one walk of the cache,
 * without a request — when the caches hold every reference; a template that does not exist at all
 * is not lagging (the engine names the field that refers to it).
 */
export async function templatesBehind(workflow: Workflow, cached: SourceLookup, fetch: SourceFetch): Promise<string[]> {
  let absent = false;
  resolveTemplateSources(workflow, (ref) => {
    const spec = cached(ref);
    if (spec === undefined) absent = true;
    return spec;
  });
  if (!absent) return [];
  const behind: string[] = [];
  const resolved = await fetchTemplateSources(workflow, async (ref) => {
    const spec = cached(ref);
    if (spec !== undefined) return spec;
    const fetched = await fetch(ref);
    if (fetched !== undefined) behind.push(`${ref.kind} ${ref.name}`);
    return fetched;
  });
  if (!resolved.ok) throw new Error(resolved.error); // unlimited: never refused
  return behind;
}

/** Whether a workflow created at `creationTimestamp` may still wait for lagging caches. */
export function mayWaitForTemplates(creationTimestamp: string | undefined, nowMs: number): boolean {
  const created = creationTimestamp ? Date.parse(creationTimestamp) : NaN;
  return Number.isFinite(created) && nowMs - created < TEMPLATE_LAG_LIMIT_MS;
}
