/**
 * The last step of a reconcile's actions: tidying up what finished nodes left running, and the
 * final list — duplicates removed, the earliest requeue kept, sorted by kind in the order the
 * applier must run them (objects a pod needs first, deletions and requeues last).
 */
import type { EngineAction, Observations } from './contract.js';
import type { WorkflowStatus } from '../api/index.js';
import { isFinal } from './node-phase.js';

/**
 * Actions that tidy up the world: pods still running under finished (or unknown) nodes, agent
 * reports of finished tasks, and when the workflow is complete every running pod and the TaskSet.
 */
export function cleanupActions(status: WorkflowStatus, observations: Observations, complete: boolean): EngineAction[] {
  const nodes = status.nodes ?? {};
  const actions: EngineAction[] = [];
  for (const pod of observations.pods) {
    if (pod.phase !== 'Pending' && pod.phase !== 'Running' && !pod.containersRunning) continue;
    const node = nodes[pod.nodeId];
    if (complete || !node || isFinal(node.phase)) {
      actions.push({
        kind: 'deletePod',
        podName: pod.podName,
        nodeId: pod.nodeId,
        reason: complete ? 'workflow completed' : 'its node has finished',
      });
    }
  }
  for (const task of observations.tasks) {
    const node = nodes[task.nodeId];
    if (!complete && (!node || isFinal(node.phase))) actions.push({ kind: 'removeTask', nodeId: task.nodeId });
  }
  if (complete && hasTaskNode(nodes)) actions.push({ kind: 'completeTaskSet' });
  return actions;
}

/** Whether any node is a plugin or http task (walked without copying 100,000 nodes into an array). */
function hasTaskNode(nodes: Readonly<Record<string, { type: string }>>): boolean {
  for (const id in nodes) {
    const t = nodes[id]!.type;
    if (t === 'Plugin' || t === 'HTTP') return true;
  }
  return false;
}

const ORDER: Record<EngineAction['kind'], number> = {
  createPVC: -2,
  createPDB: -1,
  setWorkflowMetadata: -3,
  saveMemo: 7,
  createPod: 0,
  runResource: 0,
  writeTask: 1,
  ensureAgent: 2,
  replaceAgent: 3,
  removeTask: 4,
  deletePod: 5,
  completeTaskSet: 6,
  gcPod: 7,
  deletePVC: 7,
  deletePDB: 7,
  deleteWorkflow: 8,
  requeueAt: 9,
};

/**
 * Removes duplicates (keeping the first; of several `requeueAt`, the earliest) and sorts by kind,
 * keeping walk order within a kind.
 */
export function finalize(actions: EngineAction[]): EngineAction[] {
  const seen = new Set<string>();
  const unique: EngineAction[] = [];
  let requeue: string | undefined;
  for (const a of actions) if (a.kind === 'requeueAt' && (requeue === undefined || Date.parse(a.at) < Date.parse(requeue))) requeue = a.at;
  for (const a0 of actions) {
    const a: EngineAction = a0.kind === 'requeueAt' && requeue !== undefined ? { kind: 'requeueAt', at: requeue } : a0;
    const key = actionKey(a);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(a);
  }
  return unique
    .map((a, i) => [a, i] as const)
    .sort((x, y) => ORDER[x[0].kind] - ORDER[y[0].kind] || x[1] - y[1])
    .map(([a]) => a);
}

function actionKey(a: EngineAction): string {
  switch (a.kind) {
    case 'createPod':
      return `createPod/${a.podName}`;
    case 'deletePod':
    case 'gcPod':
      return `${a.kind}/${a.podName}`;
    case 'createPVC':
      return `createPVC/${a.claim.metadata?.name ?? ''}`;
    case 'deletePVC':
      return `deletePVC/${a.claimTemplate}`;
    case 'writeTask':
    case 'removeTask':
      return `${a.kind}/${a.nodeId}`;
    case 'saveMemo':
      return `saveMemo/${a.cacheName}/${a.key}/${a.entry.nodeID}`;
    default:
      return a.kind;
  }
}
