/**
 * Resubmitting: a new workflow from an old one, as `plugflow resubmit` and the REST call make it.
 * Same spec (with argument values changed where asked), same labels and annotations except the
 * controller's state labels (phase, completed), a new name from `<old name>-`, and a label naming
 * the workflow it came from. The old workflow is left as it is, running or not.
 *
 * Memoized (the peer's `resubmit --memoized`): the new workflow starts from the old one's nodes as
 * `retry` would leave them (retry-workflow.ts: succeeded steps kept, failed ones and exit handlers
 * removed, the groups above them Running), renamed for the new workflow (`memoizedStatus`), so
 * only what failed runs again. Only a Failed or Error workflow, and without new argument values:
 * the kept results were computed from the old ones.
 */
import {
  API_VERSION,
  LABEL_COMPLETED,
  LABEL_PHASE,
  LABEL_RESUBMITTED_FROM,
  type NodeStatus,
  type Workflow,
  type WorkflowStatus,
} from '../api/index.js';
import { nodeIdFor } from './node-naming.js';
import { RetryError, retryWorkflow } from './retry-workflow.js';

/** `precondition`: the workflow is not in a state this resubmit applies to; `invalid`: the request. */
export class ResubmitError extends Error {
  constructor(
    message: string,
    readonly reason: 'precondition' | 'invalid' = 'invalid',
  ) {
    super(message);
  }
}

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

/**
 * The status a memoized resubmit of `old` starts from once the new workflow is named `newName`:
 * the nodes `retry` would keep, with names, ids, children and boundaries renamed from the old
 * workflow's name to the new one. Kept nodes lose their `podName` (those pods belong to the old
 * workflow) and their `observed` mark; the workflow is Running with nothing else carried over.
 */
export function memoizedStatus(old: Workflow, newName: string): WorkflowStatus {
  const name = old.metadata.name ?? '';
  const where = `Workflow ${old.metadata.namespace}/${name}`;
  const phase = old.status?.phase;
  if (phase !== 'Failed' && phase !== 'Error')
    throw new ResubmitError(
      `${where} is ${phase || 'not started'}: only a workflow that ended Failed or Error can be resubmitted memoized`,
      'precondition',
    );
  let kept: WorkflowStatus;
  try {
    kept = retryWorkflow(`${old.metadata.namespace}/${name}`, name, old.status, { evenWithoutFailedSteps: true }).status;
  } catch (err) {
    if (err instanceof RetryError) throw new ResubmitError(err.message, err.reason);
    throw err;
  }
  const rename = (nodeName: string) =>
    nodeName === name ? newName : nodeName.startsWith(name) ? newName + nodeName.slice(name.length) : nodeName;
  const ids = new Map<string, string>();
  for (const n of Object.values(kept.nodes ?? {})) ids.set(n.id, nodeIdFor(newName, rename(n.name)));
  const nodes: Record<string, NodeStatus> = {};
  for (const n of Object.values(kept.nodes ?? {})) {
    const id = ids.get(n.id)!;
    const copy: NodeStatus = { ...n, id, name: rename(n.name) };
    if (n.displayName === name) copy.displayName = newName;
    if (n.children) copy.children = n.children.map((c) => ids.get(c)).filter((c): c is string => c !== undefined);
    if (n.boundaryID !== undefined) copy.boundaryID = ids.get(n.boundaryID) ?? n.boundaryID;
    delete copy.podName;
    delete copy.observed;
    nodes[id] = copy;
  }
  return { phase: 'Running', nodes };
}
