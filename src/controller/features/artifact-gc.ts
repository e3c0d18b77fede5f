/**
 * Artifact garbage collection as a controller feature (artifact-gc.ts runs it;
 * src/engine/artifact-gc.ts decides): the finalizer goes on in the status write that comes before
 * the first pod can store an artifact, and the collection runs when the workflow ends and while it is being deleted.
 */
import { FINAL_WORKFLOW_PHASES } from '../../api/index.js';
import { ARTIFACT_GC_FINALIZER, usesArtifactGC } from '../../engine/index.js';
import type { ArtifactGC } from '../artifact-gc.js';
import type { FeatureOutcome, WorkflowFeature } from './feature.js';

const outcome = (at: number | undefined): FeatureOutcome | undefined => (at === undefined ? undefined : { requeueAtMs: at });

export function artifactGCFeature(gc: ArtifactGC): WorkflowFeature {
  return {
    name: 'artifact-gc',
    finalizers: (_workflow, run) => (usesArtifactGC(run.effective.spec) ? [ARTIFACT_GC_FINALIZER] : []),
    finished: async ({ workflow, run }) => outcome(await gc.collect(workflow, run.effective.spec, true)),
    // A deleted workflow is only held by finalizers; ours waits for its artifacts.
    deleting: async (wf, run) => {
      if (!wf.metadata.finalizers?.includes(ARTIFACT_GC_FINALIZER)) return undefined;
      return outcome(await gc.collect(wf, run().effective.spec, FINAL_WORKFLOW_PHASES.includes(wf.status?.phase ?? '')));
    },
  };
}
