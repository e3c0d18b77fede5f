/**
 * The one resolver of a workflow's template sources: the (Cluster)WorkflowTemplates it refers to
 * through `spec.workflowTemplateRef`, `templateRef`s and hooks, followed transitively (a fetched
 * template may refer to more) until nothing is missing.
 *
 * Its rules, the same for every caller:
 * - each source is looked up once by kind and name, so reference cycles end;
 * - a source that does not exist is left out (the engine's validator then names the field that
 *   refers to it — "… not found");
 * - with `maxSources`, the walk stops with `workflow refers to more than N templates` once it
 *   would look up more than N (a guard for callers whose lookups cost a request each).
 *
 * The loop is written once, as a generator that yields each reference it needs and receives the
 * template's spec (or undefined); two thin drivers run it: `resolveTemplateSources` over a
 * synchronous lookup (the controller's informer cache) and `fetchTemplateSources` over an async
 * fetch (the REST server, reading with the caller's rights). A lookup that throws (403, an
 * invalid stored template) ends the resolution with its error.
 */
import type { WorkflowSpec, Workflow } from '../api/index.js';
import { templateSourceKey, type TemplateSource } from './contract.js';
import { missingTemplateSources, type SourceRef } from './effective-spec.js';

export type TemplateSources = Record<string, TemplateSource>;

export type SourceResolution = { ok: true; sources: TemplateSources } | { ok: false; error: string };

export interface ResolveOptions {
  /** Most sources looked up for one workflow; unlimited when unset. */
  maxSources?: number;
}

/** Synchronous lookup: the template's spec, or undefined when it does not exist. */
export type SourceLookup = (ref: SourceRef) => WorkflowSpec | undefined;
/** Asynchronous lookup: the template's spec, or undefined when it does not exist. */
export type SourceFetch = (ref: SourceRef) => Promise<WorkflowSpec | undefined>;

/** Follows the references of `workflow` with a synchronous lookup. */
export function resolveTemplateSources(workflow: Workflow, lookup: SourceLookup, options: ResolveOptions = {}): SourceResolution {
  const walk = resolution(workflow, options);
  let step = walk.next();
  while (!step.done) step = walk.next(lookup(step.value));
  return step.value;
}

/** Follows the references of `workflow` with an asynchronous fetch (one at a time). */
export async function fetchTemplateSources(
  workflow: Workflow,
  fetch: SourceFetch,
  options: ResolveOptions = {},
): Promise<SourceResolution> {
  const walk = resolution(workflow, options);
  let step = walk.next();
  while (!step.done) step = walk.next(await fetch(step.value));
  return step.value;
}

/** The fixed-point loop: yields each reference to look up, receives its spec (or undefined). */
function* resolution(workflow: Workflow, options: ResolveOptions): Generator<SourceRef, SourceResolution, WorkflowSpec | undefined> {
  const sources: TemplateSources = {};
  const absent = new Set<string>();
  let lookedUp = 0;
  for (;;) {
    const missing = missingTemplateSources(workflow, sources).filter((r) => !absent.has(templateSourceKey(r.kind, r.name)));
    if (missing.length === 0) return { ok: true, sources };
    for (const ref of missing) {
      if (options.maxSources !== undefined && ++lookedUp > options.maxSources) {
        return { ok: false, error: `workflow refers to more than ${options.maxSources} templates` };
      }
      const key = templateSourceKey(ref.kind, ref.name);
      const spec = yield ref;
      if (spec === undefined) absent.add(key);
      else sources[key] = templateSource(spec);
    }
  }
}

/** A (Cluster)WorkflowTemplate's spec as the engine keeps it. */
function templateSource(spec: WorkflowSpec): TemplateSource {
  const source: TemplateSource = { templates: spec.templates ?? [], spec };
  if (spec.entrypoint !== undefined) source.entrypoint = spec.entrypoint;
  if (spec.arguments !== undefined) source.arguments = spec.arguments;
  return source;
}
