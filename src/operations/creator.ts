/**
 * Who submitted a workflow: the user the API server saw for the caller's token, recorded by the
 * REST server when it creates (or resubmits) a workflow. A value the client wrote itself is
 * never kept — it would let anyone name someone else — so it is replaced, or removed when the
 * creator is not known (--auth-mode=server, the CLI with its kubeconfig).
 */
import type { Workflow } from '../api/index.js';

export const CREATOR_ANNOTATION = 'workflows.plugflow.io/creator';

/** `metadata` with CREATOR_ANNOTATION set to `creator` (or removed). Pure. */
export function withCreator(metadata: Workflow['metadata'], creator: string | undefined): Workflow['metadata'] {
  const annotations = { ...(metadata.annotations ?? {}) };
  delete annotations[CREATOR_ANNOTATION];
  if (creator) annotations[CREATOR_ANNOTATION] = creator;
  const { annotations: _given, ...rest } = metadata;
  return Object.keys(annotations).length === 0 ? rest : { ...rest, annotations };
}
