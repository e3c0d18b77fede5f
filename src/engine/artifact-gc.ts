/**
 * Artifact garbage collection: which stored output artifacts of a workflow are deleted, and when.
 * Pure; the controller's shell (src/controller/artifact-gc.ts) runs the deletion in a pod (the
 * controller reads no Secret) and keeps the workflow's finalizer until it is done.
 *
 * An artifact's strategy is its own `artifactGC.strategy`, else the workflow's
 * `spec.artifactGC.strategy`, else Never:
 *   OnWorkflowCompletion  deleted once the workflow has finished;
 *   OnWorkflowDeletion    deleted when the workflow is deleted (the finalizer holds it until then);
 *   Never                 kept.
 * A workflow deleted before it finished has all of its collectable artifacts deleted then.
 * What is done is recorded in `status.artifactGCStatus.strategiesProcessed`, so a restarted
 * controller never runs a strategy twice and never forgets one.
 */
import { LABEL_PREFIX, type Artifact, type Template, type Workflow, type WorkflowStatus } from '../api/index.js';

export const ARTIFACT_GC_FINALIZER = `${LABEL_PREFIX}artifact-gc`;
export const GC_STRATEGIES = ['OnWorkflowCompletion', 'OnWorkflowDeletion', 'Never'] as const;
export type GCStrategy = 'OnWorkflowCompletion' | 'OnWorkflowDeletion';

export interface ArtifactGCStatus {
  /** Strategy → true once its artifacts were deleted. */
  strategiesProcessed?: Partial<Record<GCStrategy, boolean>>;
}

export type WorkflowStatusWithGC = WorkflowStatus & { artifactGCStatus?: ArtifactGCStatus };

type Strategy = GCStrategy | 'Never';

function strategyOf(own: string | undefined, workflow: string | undefined): Strategy {
  const s = own || workflow || 'Never';
  return s === 'OnWorkflowCompletion' || s === 'OnWorkflowDeletion' ? s : 'Never';
}

/** Checks every artifactGC.strategy; `add(field, detail)` as validate.ts does. */
export function checkArtifactGC(spec: Workflow['spec'], add: (field: string, detail: string) => void): void {
  const check = (v: unknown, field: string) => {
    if (v !== undefined && v !== '' && !(GC_STRATEGIES as readonly unknown[]).includes(v))
      add(field, `must be one of ${GC_STRATEGIES.join(', ')}, got ${JSON.stringify(v)}`);
  };
  check(spec.artifactGC?.strategy, 'spec.artifactGC.strategy');
  for (const t of spec.templates ?? [])
    for (const a of t.outputs?.artifacts ?? [])
      check(a.artifactGC?.strategy, `spec.templates[${t.name}].outputs.artifacts[${a.name}].artifactGC.strategy`);
}

/** Whether any artifact of the workflow may be collected: then it carries the finalizer. */
export function usesArtifactGC(spec: Workflow['spec'], templates: readonly Template[] = spec.templates ?? []): boolean {
  const wf = spec.artifactGC?.strategy;
  if (strategyOf(undefined, wf) !== 'Never') return true;
  return templates.some((t) => (t.outputs?.artifacts ?? []).some((a) => strategyOf(a.artifactGC?.strategy, wf) !== 'Never'));
}

/** The strategies due now and not processed yet, in the order they run. */
export function dueStrategies(workflow: Workflow, finished: boolean, deleting: boolean): GCStrategy[] {
  const done = (workflow.status as WorkflowStatusWithGC | undefined)?.artifactGCStatus?.strategiesProcessed ?? {};
  const due: GCStrategy[] = [];
  if ((finished || deleting) && !done.OnWorkflowCompletion) due.push('OnWorkflowCompletion');
  if (deleting && !done.OnWorkflowDeletion) due.push('OnWorkflowDeletion');
  return due;
}

/**
 * The stored artifacts of the workflow's nodes whose strategy is `strategy` (once each: a steps
 * template passing a step's artifact on names the same object). Main-logs follow the workflow's
 * strategy.
 */
export function artifactsToCollect(workflow: Workflow, strategy: GCStrategy): Artifact[] {
  const wfStrategy = workflow.spec.artifactGC?.strategy;
  const seen = new Set<string>();
  const out: Artifact[] = [];
  for (const node of Object.values(workflow.status?.nodes ?? {})) {
    if (node.type !== 'Pod') continue; // steps/DAG outputs name their children's objects
    for (const a of node.outputs?.artifacts ?? []) {
      const id = storedId(a);
      if (!id) continue;
      if (strategyOf(a.artifactGC?.strategy, wfStrategy) !== strategy) continue;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(a);
    }
  }
  return out;
}

/** One stored object's identity (object store or blob store); undefined for what names none. */
function storedId(a: Artifact): string | undefined {
  const s3 = a.vendorAObject;
  if (s3?.key && s3.bucket) return `s3\u0000${s3.endpoint ?? ''}\u0000${s3.bucket}\u0000${s3.key}`;
  const b = a.vendorB;
  if (b?.blob && b.container && b.endpoint) return `blob\u0000${b.endpoint}\u0000${b.container}\u0000${b.blob}`;
  const g = a.vendorCObject;
  if (g?.bucket && g.key) return `gcs\u0000${g.bucket}\u0000${g.key}`;
  const p = a.plugin;
  if (p?.name && p.key) return `plugin\u0000${p.name}\u0000${p.configuration ?? ''}\u0000${p.key}`;
  return undefined;
}

/**
 * The strategy that already deleted this stored artifact of the workflow, if one did: `plugflow
 * cp` and the download endpoint say so instead of failing on a missing object.
 */
export function collectedBy(workflow: Workflow, a: Artifact): GCStrategy | undefined {
  const s = strategyOf(a.artifactGC?.strategy, workflow.spec.artifactGC?.strategy);
  if (s === 'Never') return undefined;
  const done = (workflow.status as WorkflowStatusWithGC | undefined)?.artifactGCStatus?.strategiesProcessed;
  return done?.[s] ? s : undefined;
}
