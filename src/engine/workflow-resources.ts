/**
 * Objects a workflow owns besides its pods: the PersistentVolumeClaims of
 * `spec.volumeClaimTemplates` and the PodDisruptionBudget of `spec.podDisruptionBudget` — when to
 * create them and when to delete them, decided from the status and the observed pods (pure).
 *
 * Creation: both must exist before the first step pod (a pod naming a missing claim waits;
 * a pod without its budget may be evicted). They are asked for on every reconcile of a running
 * workflow until a step pod of it is observed; the controller applies them before creating pods
 * and stops at an error, so an observed pod proves they were made. AlreadyExists counts as done.
 *
 * Deletion once the workflow has ended: the budget always (its pods are gone or going); the
 * claims per `spec.volumeClaimGC.strategy` — OnWorkflowSuccess (the peer's default: a failed
 * workflow's volumes are kept to look into) or OnWorkflowCompletion. Deleting is asked for on
 * every reconcile of the finished workflow (NotFound is fine): nothing in the status records it,
 * so a crash between the status write and the delete loses nothing. Both objects are also owned
 * by the workflow, so deleting the workflow removes them.
 */
import { FINAL_WORKFLOW_PHASES, type WorkflowSpec, type WorkflowStatus } from '../api/index.js';
import type { EngineAction, PodObservation } from './contract.js';

export const VOLUME_CLAIM_GC_STRATEGIES = ['OnWorkflowSuccess', 'OnWorkflowCompletion'] as const;

/** Checks `spec.volumeClaimTemplates`, `spec.volumeClaimGC` and `spec.podDisruptionBudget`. */
export function checkResourceFields(spec: WorkflowSpec, add: (field: string, detail: string) => void): void {
  const seen = new Set<string>();
  (spec.volumeClaimTemplates ?? []).forEach((t, i) => {
    const name = t?.metadata?.name;
    if (!name) add(`spec.volumeClaimTemplates[${i}].metadata.name`, 'is required: it is the volume name templates mount');
    else if (seen.has(name)) add(`spec.volumeClaimTemplates[${name}]`, 'is given twice');
    else seen.add(name);
    if (!t?.spec) add(`spec.volumeClaimTemplates[${name ?? i}].spec`, 'is required');
  });
  const strategy = spec.volumeClaimGC?.strategy;
  if (strategy !== undefined && strategy !== '' && !(VOLUME_CLAIM_GC_STRATEGIES as readonly string[]).includes(strategy))
    add('spec.volumeClaimGC.strategy', `must be one of ${VOLUME_CLAIM_GC_STRATEGIES.join(', ')}, got ${JSON.stringify(strategy)}`);
  const pdb = spec.podDisruptionBudget;
  if (pdb && (pdb as Record<string, unknown>).selector !== undefined)
    add('spec.podDisruptionBudget.selector', "is set by plugflow (the workflow's pods); leave it out");
}

export interface ResourceInput {
  spec: WorkflowSpec;
  status: WorkflowStatus;
  pods: readonly PodObservation[];
}

export function resourceActions({ spec, status, pods }: ResourceInput): EngineAction[] {
  const claims = (spec.volumeClaimTemplates ?? []).filter((t) => t?.metadata?.name);
  const pdb = spec.podDisruptionBudget;
  if (claims.length === 0 && !pdb) return [];
  const ended = FINAL_WORKFLOW_PHASES.includes(status.phase ?? '') && status.finishedAt !== undefined;
  const actions: EngineAction[] = [];
  if (!ended) {
    if (pods.length > 0) return [];
    for (const t of claims) actions.push({ kind: 'createPVC', claim: t });
    if (pdb) actions.push({ kind: 'createPDB', spec: pdb });
    return actions;
  }
  const strategy = spec.volumeClaimGC?.strategy || 'OnWorkflowSuccess';
  if (strategy === 'OnWorkflowCompletion' || status.phase === 'Succeeded')
    for (const t of claims) actions.push({ kind: 'deletePVC', claimTemplate: t.metadata!.name!, reason: `spec.volumeClaimGC ${strategy}` });
  if (pdb) actions.push({ kind: 'deletePDB' });
  return actions;
}
