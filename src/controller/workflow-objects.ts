/**
 * Applies the engine's actions on the objects a workflow owns besides its pods and TaskSet, and
 * on the workflow itself (src/engine/workflow-gc.ts and workflow-resources.ts decide):
 *
 * - createPVC / createPDB: created owned by the workflow (deleting it removes them, through the
 *   garbage collector), AlreadyExists counts as done; applied BEFORE the step pods, and an error
 *   stops the apply so no pod is created without its claim or budget;
 * - deletePVC / deletePDB: NotFound counts as done;
 * - gcPod: the ended pod of a finished node (spec.podGC), through the applier's pod deletion
 *   (uid precondition, expectations);
 * - setWorkflowMetadata: one merge patch of the workflow's labels and annotations;
 * - deleteWorkflow: the finished workflow's ttlStrategy time has passed; the uid precondition
 *   keeps a newer workflow of the same name safe; NotFound counts as done.
 */
import { API_VERSION, LABEL_COMPONENT, LABEL_WORKFLOW, type Workflow } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError, isAlreadyExists, isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/object-store.js';
import { PERSISTENT_VOLUME_CLAIMS, POD_DISRUPTION_BUDGETS, WORKFLOWS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { claimNameFor } from '../pods/build-pod.js';
import { COMPONENT_STEP } from '../pods/layout.js';

type Obj<T> = T & KubeObject;
type Of<K extends EngineAction['kind']> = Extract<EngineAction, { kind: K }>;

function ownerRefs(wf: Obj<Workflow>) {
  return [
    {
      apiVersion: API_VERSION,
      kind: 'Workflow',
      name: wf.metadata.name!,
      uid: wf.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
}

async function tolerate(p: Promise<unknown>, ok: (err: unknown) => boolean): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!ok(err)) throw err;
  }
}

/** Claims and budget first (before any pod): throws on a real error so no pod goes without them. */
export async function createWorkflowObjects(client: KubeClient, wf: Obj<Workflow>, actions: readonly EngineAction[]): Promise<void> {
  const ns = wf.metadata.namespace!;
  const name = wf.metadata.name!;
  await Promise.all(
    actions.map(async (a) => {
      if (a.kind === 'createPVC') {
        const body = {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: {
            ...a.claim.metadata,
            name: claimNameFor(name, a.claim.metadata!.name!),
            namespace: ns,
            labels: { ...a.claim.metadata?.labels, [LABEL_WORKFLOW]: name },
            ownerReferences: ownerRefs(wf),
          },
          spec: a.claim.spec,
        };
        await tolerate(client.create(PERSISTENT_VOLUME_CLAIMS, ns, body), isAlreadyExists);
      } else if (a.kind === 'setWorkflowMetadata') {
        await client.mergePatch(WORKFLOWS, ns, name, { metadata: { labels: a.labels, annotations: a.annotations } });
      } else if (a.kind === 'createPDB') {
        const body = {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name, namespace: ns, labels: { [LABEL_WORKFLOW]: name }, ownerReferences: ownerRefs(wf) },
          spec: { ...a.spec, selector: { matchLabels: { [LABEL_WORKFLOW]: name, [LABEL_COMPONENT]: COMPONENT_STEP } } },
        };
        await tolerate(client.create(POD_DISRUPTION_BUDGETS, ns, body), isAlreadyExists);
      }
    }),
  );
}

/** Deletions of claims, budget and the workflow itself (after everything else). */
export async function deleteWorkflowObjects(
  client: KubeClient,
  wf: Obj<Workflow>,
  actions: readonly EngineAction[],
  log: Logger,
): Promise<void> {
  const ns = wf.metadata.namespace!;
  const name = wf.metadata.name!;
  const key = `${ns}/${name}`;
  const gone = (err: unknown) => isNotFound(err);
  await Promise.all(
    actions.map(async (a) => {
      if (a.kind === 'deletePVC') {
        await tolerate(client.delete(PERSISTENT_VOLUME_CLAIMS, ns, claimNameFor(name, a.claimTemplate)), gone);
      } else if (a.kind === 'deletePDB') {
        await tolerate(client.delete(POD_DISRUPTION_BUDGETS, ns, name), gone);
      }
    }),
  );
  const del = actions.find((a): a is Of<'deleteWorkflow'> => a.kind === 'deleteWorkflow');
  if (del) {
    // 409: the uid precondition failed — a newer workflow of that name, which is not ours to delete.
    await tolerate(
      client.delete(WORKFLOWS, ns, name, { uid: wf.metadata.uid }),
      (e) => gone(e) || (e instanceof ApiError && e.code === 409),
    );
    log.info('deleted the finished workflow', { workflow: key, reason: del.reason });
  }
}
