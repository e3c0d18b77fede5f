/**
 * Reconciles one CronWorkflow: reads it and the workflows it started from the caches, asks
 * src/cron/decide.ts what must happen, then acts — in this order, so that a crash anywhere
 * repeats nothing: create the runs (AlreadyExists means it was created before: runs are named
 * by their scheduled time), stop what Replace replaces, store the status, delete what the
 * history limits drop, record Events. Looked at again at its next scheduled time, and whenever
 * one of its workflows changes.
 *
 * The runs are created with the controller's rights, as the peer's are: whoever may create a
 * CronWorkflow in a namespace gets workflows there (the install's RBAC for users grants both
 * together); their pods run as the workflow spec's service account, never the controller's.
 */
import { ANNOTATION_SCHEDULED_TIME, LABEL_BACKFILL, LABEL_CRON_WORKFLOW, type CronWorkflow } from '../api/index.js';
import type { Workflow } from '../api/index.js';
import { decideCron, schedulesOf, type CronChild, type ParsedSchedules } from '../cron/decide.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { splitKey } from '../kube/object-store.js';
import { CRON_WORKFLOWS, WORKFLOWS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import type { ControllerCaches } from './caches.js';
import type { ReconcileOutcome } from './reconciler.js';
import type { EventRecorder } from '../kube/event-recorder.js';

/** Work queue keys of CronWorkflows start with this (the workflows' keys are `ns/name`). */
export const CRON_KEY_PREFIX = 'cron:';

export interface CronReconcilerDeps {
  client: KubeClient;
  caches: ControllerCaches;
  events: EventRecorder;
  log: Logger;
  now?: () => number;
}

export class CronReconciler {
  /**
   * Parsed schedules by key, for the object's uid and generation: a CronWorkflow's schedules are
   * parsed once per change of its spec, not at each of its runs and status writes. One entry per
   * CronWorkflow the cache holds; dropped with the object.
   */
  private readonly parsed = new Map<string, { version: string; schedules: ParsedSchedules }>();

  constructor(private readonly deps: CronReconcilerDeps) {}

  private schedulesOf(key: string, cron: CronWorkflow): ParsedSchedules {
    const version = `${cron.metadata.uid ?? ''}/${cron.metadata.generation ?? ''}`;
    const hit = this.parsed.get(key);
    if (hit?.version === version && cron.metadata.generation !== undefined) return hit.schedules;
    const schedules = schedulesOf(cron);
    this.parsed.set(key, { version, schedules });
    return schedules;
  }

  async reconcile(key: string): Promise<ReconcileOutcome> {
    const { namespace, name } = splitKey(key);
    if (!namespace) return {};
    const cron = this.deps.caches.cronWorkflows.get(namespace, name);
    if (!cron || cron.metadata.deletionTimestamp) {
      this.parsed.delete(key);
      return {};
    }
    const nowMs = (this.deps.now ?? Date.now)();
    const children = this.deps.caches.workflowsOfCron(namespace, name).map(childOf);
    const d = decideCron(cron, children, nowMs, this.schedulesOf(key, cron));
    const where = `${namespace}/${name}`;

    for (const run of d.create) {
      try {
        await this.deps.client.create(WORKFLOWS, namespace, run);
      } catch (err) {
        if (!isAlreadyExists(err)) {
          this.deps.events.record(cron, 'Warning', 'WorkflowCreateFailed', `${run.metadata.name}: ${errorMessage(err)}`, CRON_WORKFLOWS);
          throw err;
        }
      }
    }
    for (const run of d.stop) {
      await this.deps.client.mergePatch(WORKFLOWS, namespace, run, { spec: { shutdown: 'Terminate' } }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    if (JSON.stringify(d.status) !== JSON.stringify(cron.status ?? {})) {
      try {
        // Conditional on the cached resourceVersion: a stale cache never counts a run twice.
        await this.deps.client.replace<CronWorkflow>(CRON_WORKFLOWS, namespace, name, { ...cron, status: d.status }, 'status');
      } catch (err) {
        if (isNotFound(err)) return {};
        if (isConflict(err)) return { requeueAtMs: nowMs + 200 };
        throw err;
      }
    }
    for (const old of d.delete) {
      await this.deps.client.delete(WORKFLOWS, namespace, old).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    for (const n of d.notes) {
      this.deps.log[n.type === 'Warning' ? 'warn' : 'info'](n.message, { cronWorkflow: where, reason: n.reason });
      this.deps.events.record(cron, n.type, n.reason, n.message, CRON_WORKFLOWS);
    }
    return d.requeueAtMs === undefined ? {} : { requeueAtMs: d.requeueAtMs };
  }
}

function childOf(wf: Workflow): CronChild {
  const scheduled = Date.parse(wf.metadata?.annotations?.[ANNOTATION_SCHEDULED_TIME] ?? '');
  return {
    name: wf.metadata?.name ?? '',
    ...(wf.metadata?.uid ? { uid: wf.metadata.uid } : {}),
    ...(wf.status?.phase ? { phase: wf.status.phase } : {}),
    ...(wf.status?.finishedAt ? { finishedAt: wf.status.finishedAt } : {}),
    scheduledMs: Number.isNaN(scheduled) ? 0 : scheduled,
    ...(wf.metadata?.labels?.[LABEL_BACKFILL] ? { backfill: wf.metadata.labels[LABEL_BACKFILL] } : {}),
  };
}

/** The cron queue key of a workflow started by a CronWorkflow, if it was. */
export function cronKeyOf(wf: Workflow): string | undefined {
  const cron = wf.metadata?.labels?.[LABEL_CRON_WORKFLOW];
  return cron && wf.metadata?.namespace ? `${CRON_KEY_PREFIX}${wf.metadata.namespace}/${cron}` : undefined;
}
