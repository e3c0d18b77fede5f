/**
 * The workflow archive as a controller feature (archiver.ts runs it): the finalizer goes on in
 * the first status write, a finished workflow is archived after its last actions, and a deleted
 * one is archived (when finished) before its finalizer is dropped.
 */
import { ARCHIVE_FINALIZER, type Archiver } from '../archiver.js';
import type { FeatureOutcome, WorkflowFeature } from './feature.js';

const outcome = (at: number | undefined): FeatureOutcome | undefined => (at === undefined ? undefined : { requeueAtMs: at });

export function archiveFeature(archiver: Archiver): WorkflowFeature {
  return {
    name: 'archive',
    finalizers: (workflow) => (archiver.holds(workflow) ? [ARCHIVE_FINALIZER] : []),
    finished: async ({ workflow }) => outcome(await archiver.settle(workflow)),
    deleting: async (wf) => outcome(await archiver.settle(wf)),
  };
}
