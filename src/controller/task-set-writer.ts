/**
 * The workflow's TaskSet (plugin and http tasks for its agent): one create or merge patch per
 * reconcile carrying every task change, the completed label, and the pruning of results the
 * engine has copied. Used by the action applier (action-applier.ts).
 */
import {
  API_VERSION,
  LABEL_WORKFLOW,
  isTaskSetCompleted,
  taskSetCompletedLabels,
  type Template,
  type Workflow,
  type WorkflowTaskSet,
} from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isNotFound } from '../kube/errors.js';
import { jsonEqual } from '../api/index.js';
import type { KubeObject } from '../kube/object-store.js';
import { WORKFLOW_TASK_SETS } from '../kube/resource.js';
import type { ControllerCaches } from './caches.js';

type Obj<T> = T & KubeObject;

export interface TaskSetDeps {
  client: KubeClient;
  caches: ControllerCaches;
}

/** One create or merge patch carrying every task change. */
export async function writeTaskSet(
  deps: TaskSetDeps,
  wf: Obj<Workflow>,
  writes: Record<string, Template | null>,
  complete: boolean,
): Promise<void> {
  const ns = wf.metadata.namespace!;
  const name = wf.metadata.name!;
  const existing = deps.caches.taskSetOf(ns, name);
  if (!existing) {
    const tasks = complete ? {} : Object.fromEntries(Object.entries(writes).filter(([, t]) => t !== null));
    if (Object.keys(tasks).length === 0) return; // nothing to write, nothing to complete
    const body: Obj<WorkflowTaskSet> = {
      apiVersion: API_VERSION,
      kind: 'WorkflowTaskSet',
      metadata: {
        name,
        namespace: ns,
        labels: { [LABEL_WORKFLOW]: name, ...(complete ? taskSetCompletedLabels() : {}) },
        ownerReferences: [{ apiVersion: API_VERSION, kind: 'Workflow', name, uid: wf.metadata.uid!, controller: true }],
      },
      spec: { tasks: tasks as Record<string, Template> },
    };
    try {
      deps.caches.rememberTaskSet(await deps.client.create<Obj<WorkflowTaskSet>>(WORKFLOW_TASK_SETS, ns, body));
      return;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    // Created meanwhile (a previous incarnation of this controller): patch it instead.
    return patchTaskSet(deps, wf, await deps.client.get<Obj<WorkflowTaskSet>>(WORKFLOW_TASK_SETS, ns, name), writes, complete);
  }
  return patchTaskSet(deps, wf, existing, writes, complete);
}

async function patchTaskSet(
  deps: TaskSetDeps,
  wf: Obj<Workflow>,
  ts: Obj<WorkflowTaskSet>,
  writes: Record<string, Template | null>,
  complete: boolean,
): Promise<void> {
  const current = ts.spec?.tasks ?? {};
  const tasks: Record<string, Template | null> = {};
  for (const [id, t] of Object.entries(writes)) {
    if (t === null ? id in current : !jsonEqual(current[id], t)) tasks[id] = t;
  }
  // A complete workflow leaves no task behind, whichever way its nodes ended (a node failed by
  // the workflow's end never reports its removal); a later reconcile of the finished workflow
  // catches up when this write was lost.
  if (complete) for (const id of Object.keys(current)) tasks[id] = null;
  const patch: Record<string, unknown> = {};
  if (Object.keys(tasks).length > 0) patch.spec = { tasks };
  if (complete && !isTaskSetCompleted(ts)) patch.metadata = { labels: taskSetCompletedLabels() };
  // Only a label write may meet a TaskSet deleted meanwhile; lost task changes are an error.
  if (Object.keys(patch).length > 0 && !(await patchAndRemember(deps, wf, patch, undefined, !patch.spec))) return;
  await pruneTaskResults(deps, wf, ts, writes, complete);
}

/**
 * Drops the agent's results of removed tasks from the TaskSet status (the engine has copied
 * them into the workflow): without this, a workflow with many plugin steps grows its TaskSet
 * towards the API server's object size limit. Only after the spec entry is gone, so the agent
 * cannot take the task for a new one. Once the workflow is complete every result goes (a
 * controller killed between the workflow's status write and this prune catches up here).
 */
async function pruneTaskResults(
  deps: TaskSetDeps,
  wf: Obj<Workflow>,
  ts: Obj<WorkflowTaskSet>,
  writes: Record<string, Template | null>,
  complete: boolean,
): Promise<void> {
  const results = ts.status?.nodes ?? {};
  const nodes: Record<string, null> = {};
  for (const id of Object.keys(results)) if (complete || writes[id] === null) nodes[id] = null;
  if (Object.keys(nodes).length === 0) return;
  await patchAndRemember(deps, wf, { status: { nodes } }, 'status', true);
}

/**
 * Merge-patches the workflow's TaskSet (or its `subresource`) and remembers what the API server
 * stored. False when the TaskSet was gone and `goneIsFine` (otherwise that is thrown).
 */
async function patchAndRemember(
  deps: TaskSetDeps,
  wf: Obj<Workflow>,
  patch: Record<string, unknown>,
  subresource: 'status' | undefined,
  goneIsFine: boolean,
): Promise<boolean> {
  try {
    const { namespace, name } = wf.metadata;
    deps.caches.rememberTaskSet(
      await deps.client.mergePatch<Obj<WorkflowTaskSet>>(WORKFLOW_TASK_SETS, namespace, name!, patch, subresource),
    );
    return true;
  } catch (err) {
    if (goneIsFine && isNotFound(err)) return false;
    throw err;
  }
}
