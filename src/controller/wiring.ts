/**
 * Cache events → work queue keys, through the filters of triggers.ts, plus the bookkeeping that
 * rides on the same events: creation/deletion expectations are settled when the watch shows the
 * pod, and what was remembered about a workflow is dropped when it is deleted.
 */
import { LABEL_WORKFLOW } from '../api/index.js';
import type { KubeObject } from '../kube/object-store.js';
import type { ControllerCaches } from './caches.js';
import { deletionKey, type Expectations, type FailureMemory } from './failure-memory.js';
import { isOwnEcho, podAddMatters, podChangeMatters, taskSetChangeMatters } from './triggers.js';
import type { WorkQueue } from './work-queue.js';
import { CRON_KEY_PREFIX, cronKeyOf } from './cron-reconciler.js';

export interface WiringDeps {
  caches: ControllerCaches;
  queue: WorkQueue;
  failures: FailureMemory;
  creations: Expectations;
  deletions: Expectations;
  /** Called with the key of a deleted workflow (its synchronization locks are let go). */
  workflowDeleted?: (key: string) => void;
}

const keyOf = (o: KubeObject): string => `${o.metadata?.namespace}/${o.metadata?.name}`;

/** The workflow a pod or TaskSet belongs to, as a queue key. */
function ownerKey(o: KubeObject): string | undefined {
  const wf = o.metadata?.labels?.[LABEL_WORKFLOW];
  return wf && o.metadata?.namespace ? `${o.metadata.namespace}/${wf}` : undefined;
}

export function wireTriggers({ caches, queue, failures, creations, deletions, workflowDeleted }: WiringDeps): void {
  const enqueueOwner = (o: KubeObject): void => {
    const key = ownerKey(o);
    if (key) queue.add(key);
  };

  // A CronWorkflow is looked at when it changes and when one of its runs does (cron-reconciler.ts).
  caches.cronWorkflows.addHandlers({
    onAdd: (cron) => queue.add(`${CRON_KEY_PREFIX}${keyOf(cron)}`),
    onUpdate: (old, cron) => {
      if (old.metadata?.generation !== cron.metadata?.generation || old === cron) queue.add(`${CRON_KEY_PREFIX}${keyOf(cron)}`);
    },
    // Looked at once more, finding it gone: its parsed schedules are dropped.
    onDelete: (cron) => queue.add(`${CRON_KEY_PREFIX}${keyOf(cron)}`),
  });
  const enqueueCron = (wf: KubeObject): void => {
    const key = cronKeyOf(wf as never);
    if (key) queue.add(key);
  };
  caches.workflows.addHandlers({
    onAdd: (wf) => queue.add(keyOf(wf)),
    onUpdate: (old, wf) => {
      // Resync (old === wf) always reconciles; the echo of our own write never needs to.
      if (old.status?.phase !== wf.status?.phase) enqueueCron(wf);
      if (old !== wf && isOwnEcho(old, wf, caches.ownStatusOf(wf))) return;
      queue.add(keyOf(wf));
    },
    onDelete: (wf) => {
      if (wf.metadata.uid) failures.forget(wf.metadata.uid);
      caches.forget(wf.metadata.namespace!, wf.metadata.name!);
      workflowDeleted?.(keyOf(wf));
      enqueueCron(wf);
    },
  });

  caches.pods.addHandlers({
    onAdd: (pod) => {
      creations.observed(keyOf(pod));
      if (podAddMatters(pod)) enqueueOwner(pod);
    },
    onUpdate: (old, pod) => {
      if (podChangeMatters(old, pod)) enqueueOwner(pod);
    },
    onDelete: (pod) => {
      creations.observed(keyOf(pod));
      deletions.observed(deletionKey(pod));
      enqueueOwner(pod);
    },
  });

  caches.taskSets.addHandlers({
    onAdd: (ts) => {
      if (Object.keys(ts.status?.nodes ?? {}).length > 0) queue.add(keyOf(ts));
    },
    onUpdate: (old, ts) => {
      if (taskSetChangeMatters(old, ts)) queue.add(keyOf(ts));
    },
    onDelete: (ts) => queue.add(keyOf(ts)),
  });
}
