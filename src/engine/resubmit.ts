/**
 * Resubmitting: a new workflow from an old one, as `plugflow resubmit` and the REST call make it.
 * Same spec (with argument values changed where asked), same labels and annotations except the
 * controller's state labels (phase, completed), a new name from `<old name>-`, and a label naming
 * the workflow it came from. The old workflow is left as it is, running or not.
 */
import { API_VERSION, LABEL_COMPLETED, LABEL_PHASE, LABEL_RESUBMITTED_FROM, type Workflow } from '../api/index.js';

export class ResubmitError extends Error {}

export interface ResubmitOptions {
  /** New values of workflow arguments (`spec.arguments.parameters`), by name; each must exist. */
  parameters?: Record<string, string>;
}

export function resubmittedWorkflow(old: Workflow, options: ResubmitOptions = {}): Workflow {
  const name = old.metadata.name ?? '';
  const labels = { ...(old.metadata.labels ?? {}) };
  delete labels[LABEL_PHASE];
  delete labels[LABEL_COMPLETED];
  labels[LABEL_RESUBMITTED_FROM] = name;
  const spec = structuredClone(old.spec);
  // A resubmitted workflow runs, whatever the old one was told at the end.
  delete spec.shutdown;
  delete spec.suspend;
  const given = Object.entries(options.parameters ?? {});
  if (given.length > 0) {
    const params = spec.arguments?.parameters ?? [];
    for (const [key, value] of given) {
      const p = params.find((x) => x.name === key);
      if (!p) {
        const known = params.map((x) => x.name).join(', ') || 'none';
        throw new ResubmitError(`Workflow ${old.metadata.namespace}/${name} has no argument "${key}" (its arguments: ${known})`);
      }
      p.value = value;
      delete p.valueFrom;
    }
  }
  const meta = old.metadata;
  return {
    apiVersion: API_VERSION,
    kind: 'Workflow',
    metadata: {
      generateName: `${name}-`,
      namespace: meta.namespace,
      labels,
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
    },
    spec,
  };
}
