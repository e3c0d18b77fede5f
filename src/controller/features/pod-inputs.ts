/**
 * The lookups a step pod needs (its artifact repository, its images' entrypoints) as a
 * controller feature: done after the engine asked for the pod and before the status is written
 * (pod-inputs.ts), so that a failed lookup fails its node in this reconcile and the applier only
 * builds pods.
 */
import type { PodInputs } from '../pod-inputs.js';
import type { WorkflowFeature } from './feature.js';

export function podInputsFeature(inputs: PodInputs): WorkflowFeature {
  return {
    name: 'pod-inputs',
    // The effective workflow: a WorkflowTemplate's repository and node selector count.
    rerun: (_wf, run) => inputs.prepare(run.effective, run.actions),
    forget: (key) => inputs.forget(key),
  };
}
