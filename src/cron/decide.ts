/**
 * What a CronWorkflow needs now, decided from its spec, its status, the workflows it started
 * and the time — pure, so the controller's cron reconciler (src/controller/cron-reconciler.ts)
 * only executes, and every rule here is unit-tested.
 *
 * One decision:
 * 1. runs it started that have ended are counted once (succeeded/failed) and leave `active`;
 * 2. the stop strategy (`stopStrategy.expression` over `cronworkflow.succeeded`/`failed`) may
 *    stop it for good (phase Stopped);
 * 3. the latest scheduled time since `lastScheduledTime` (or its creation) is due, unless
 *    suspended: skipped when it is older than `startingDeadlineSeconds` (the controller was
 *    down), when `when` is false, or under Forbid while a run is active; under Replace the
 *    active runs are stopped first. Only the latest missed time ever runs (as Kubernetes
 *    CronJobs do), and each time is handled once: `lastScheduledTime` moves to it;
 * 4. finished runs beyond the history limits are deleted, oldest first;
 * 5. it asks to be looked at again at its next scheduled time.
 *
 * A run is named `<cron>-<unix seconds of its scheduled time>`: creating it twice (a controller
 * restarted between the create and the status write) meets AlreadyExists and changes nothing.
 */
import { ANNOTATION_SCHEDULED_TIME, LABEL_CRON_WORKFLOW, type CronWorkflow, type CronWorkflowStatus } from '../api/index.js';
import type { Workflow } from '../api/index.js';
import { evaluateRetryExpression, evaluateWhenText } from '../engine/index.js';
import { errorMessage } from '../log/error-message.js';
import { latestDue, MAX_SCHEDULES, nextOf, parseSchedule, type Schedule } from './schedule.js';

/** A workflow the CronWorkflow started, as the cache shows it. */
export interface CronChild {
  name: string;
  uid?: string;
  phase?: string;
  /** When it finished (RFC 3339), once it has. */
  finishedAt?: string;
  /** Its scheduled time (the annotation), ms. */
  scheduledMs: number;
}

export interface CronDecision {
  /** The status to store (the whole of it). */
  status: CronWorkflowStatus;
  /** The workflow to create, if a run starts. */
  create?: Workflow;
  /** Active runs to stop (concurrencyPolicy Replace): their spec.shutdown becomes Terminate. */
  stop: string[];
  /** Finished runs beyond the history limits. */
  delete: string[];
  /** What happened, for the log and Events. */
  notes: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
  /** When to look again (ms), if ever. */
  requeueAtMs?: number;
}

const FINAL = ['Succeeded', 'Failed', 'Error'];

export const DEFAULT_SUCCESSFUL_HISTORY = 3;
export const DEFAULT_FAILED_HISTORY = 1;

export type ParsedSchedules = { ok: true; schedules: Schedule[] } | { ok: false; error: string };

/**
 * The schedules of the spec, or the first error (naming the field). The list's length and each
 * text's type are checked before anything is parsed, so an object stored with thousands of
 * schedules (before the CRD bounded the list) costs one comparison, not thousands of parses.
 */
export function schedulesOf(cron: CronWorkflow): ParsedSchedules {
  const spec = cron.spec ?? ({} as CronWorkflow['spec']);
  const list: unknown = spec.schedules ?? [];
  if (!Array.isArray(list)) return { ok: false, error: 'spec.schedules: must be a list of schedules' };
  const count = list.length + (spec.schedule ? 1 : 0);
  if (count > MAX_SCHEDULES)
    return {
      ok: false,
      error: `spec.schedules: at most ${MAX_SCHEDULES} schedules (with spec.schedule) are allowed, this CronWorkflow has ${count}; split it into several CronWorkflows`,
    };
  const texts: [unknown, string][] = [];
  if (spec.schedule) texts.push([spec.schedule, 'spec.schedule']);
  list.forEach((s, i) => texts.push([s, `spec.schedules[${i}]`]));
  if (texts.length === 0) return { ok: false, error: 'spec.schedule: a schedule is required (or spec.schedules)' };
  if (spec.timezone !== undefined && typeof spec.timezone !== 'string') return { ok: false, error: 'spec.timezone: must be a string' };
  const schedules: Schedule[] = [];
  for (const [text, field] of texts) {
    if (typeof text !== 'string') return { ok: false, error: `${field}: must be a string` };
    const parsed = parseSchedule(text, spec.timezone || undefined, field);
    if (!parsed.ok) return parsed;
    schedules.push(parsed.schedule);
  }
  return { ok: true, schedules };
}

/** `schedules`: the spec's, parsed (the controller parses once per generation: schedule-cache.ts). */
export function decideCron(
  cron: CronWorkflow,
  children: readonly CronChild[],
  nowMs: number,
  schedules: ParsedSchedules = schedulesOf(cron),
): CronDecision {
  const spec = cron.spec;
  const name = cron.metadata.name ?? '';
  const prev = cron.status ?? {};
  const status: CronWorkflowStatus = {
    ...prev,
    succeeded: prev.succeeded ?? 0,
    failed: prev.failed ?? 0,
    phase: prev.phase ?? 'Active',
  };
  const out: CronDecision = { status, stop: [], delete: [], notes: [] };
  const byName = new Map(children.map((c) => [c.name, c]));

  // 1. Ended runs are counted once, as they leave `active`.
  const active: NonNullable<CronWorkflowStatus['active']> = [];
  for (const ref of prev.active ?? []) {
    const child = byName.get(ref.name);
    if (!child) continue; // deleted while it ran: not counted
    if (FINAL.includes(child.phase ?? '')) {
      if (child.phase === 'Succeeded') status.succeeded!++;
      else status.failed!++;
    } else active.push(ref);
  }
  // Runs created but not yet recorded (the status write after a create was lost) are active too.
  for (const c of children) if (!FINAL.includes(c.phase ?? '') && !active.some((a) => a.name === c.name)) active.push(ref(cron, c));
  status.active = active;

  const conditions = (status.conditions ?? []).filter((c) => c.type !== 'SpecError');
  if (!schedules.ok) {
    status.conditions = [...conditions, { type: 'SpecError', status: 'True', message: schedules.error }];
    if (!(prev.conditions ?? []).some((c) => c.type === 'SpecError' && c.message === schedules.error))
      out.notes.push({ type: 'Warning', reason: 'SpecError', message: schedules.error });
    out.delete = overHistory(cron, children);
    return out;
  }
  status.conditions = conditions;
  if (status.conditions.length === 0) delete status.conditions;

  // 2. The stop strategy.
  const expression = spec.stopStrategy?.expression ?? spec.stopStrategy?.condition;
  if (status.phase !== 'Stopped' && expression) {
    const env = { cronworkflow: { name, namespace: cron.metadata.namespace, succeeded: status.succeeded, failed: status.failed } };
    const stop = evaluateRetryExpression(expression, env, 'spec.stopStrategy.expression');
    if (typeof stop === 'string') out.notes.push({ type: 'Warning', reason: 'StopStrategyError', message: stop });
    else if (stop) {
      status.phase = 'Stopped';
      out.notes.push({
        type: 'Normal',
        reason: 'Stopped',
        message: `stopped by spec.stopStrategy.expression ${JSON.stringify(expression)}`,
      });
    }
  }

  // 3. The latest due time.
  const created = Date.parse(cron.metadata.creationTimestamp ?? '') || nowMs;
  const last = prev.lastScheduledTime ? Date.parse(prev.lastScheduledTime) : created;
  if (status.phase !== 'Stopped' && !spec.suspend) {
    const due = latestDue(schedules.schedules, last, nowMs);
    if (due !== undefined) decideRun(cron, due, nowMs, active, out);
  }

  // 4. History, 5. next look.
  out.delete = overHistory(cron, children);
  if (status.phase !== 'Stopped' && !spec.suspend) {
    const next = nextOf(schedules.schedules, Math.max(nowMs, last));
    if (next !== undefined) out.requeueAtMs = next;
  }
  return out;
}

function decideRun(
  cron: CronWorkflow,
  due: number,
  nowMs: number,
  active: NonNullable<CronWorkflowStatus['active']>,
  out: CronDecision,
): void {
  const spec = cron.spec;
  const at = new Date(due).toISOString();
  out.status.lastScheduledTime = at;
  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && deadline !== null && nowMs - due > Number(deadline) * 1000) {
    out.notes.push({
      type: 'Warning',
      reason: 'MissedSchedule',
      message: `the run scheduled at ${at} was skipped: it could not start within spec.startingDeadlineSeconds (${deadline}) of its time`,
    });
    return;
  }
  if (spec.when) {
    const vars = cronVariables(cron);
    try {
      const { result, rendered } = evaluateWhenText(spec.when, vars, 'spec.when');
      if (!result) {
        out.notes.push({
          type: 'Normal',
          reason: 'WhenFalse',
          message: `the run scheduled at ${at} was skipped: spec.when ${JSON.stringify(rendered)} is false`,
        });
        return;
      }
    } catch (err) {
      out.notes.push({ type: 'Warning', reason: 'WhenError', message: `the run scheduled at ${at} was skipped: ${errorMessage(err)}` });
      return;
    }
  }
  const policy = spec.concurrencyPolicy ?? 'Allow';
  if (policy === 'Forbid' && active.length > 0) {
    out.notes.push({
      type: 'Normal',
      reason: 'ConcurrencyForbidden',
      message: `the run scheduled at ${at} was skipped: ${active.map((a) => a.name).join(', ')} still running (concurrencyPolicy Forbid)`,
    });
    return;
  }
  if (policy === 'Replace') out.stop = active.map((a) => a.name);
  const name = `${cron.metadata.name}-${Math.floor(due / 1000)}`;
  out.create = runWorkflow(cron, name, at);
  out.status.active = [...active, { name, namespace: cron.metadata.namespace ?? '' }];
  out.notes.push({ type: 'Normal', reason: 'WorkflowCreated', message: `started ${name} for the run scheduled at ${at}` });
}

/**
 * What every workflow a CronWorkflow starts carries, scheduled or submitted from it by hand: the
 * labels and annotations of workflowMetadata, the cron's label, the cron as its owner, a copy of
 * workflowSpec. No name: each caller names it.
 */
export function workflowOfCron(cron: CronWorkflow): Workflow {
  const meta = cron.spec.workflowMetadata ?? {};
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'Workflow',
    metadata: {
      namespace: cron.metadata.namespace,
      labels: { ...(meta.labels ?? {}), [LABEL_CRON_WORKFLOW]: cron.metadata.name ?? '' },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(cron.metadata.uid
        ? {
            ownerReferences: [
              {
                apiVersion: 'plugflow.io/v1alpha1',
                kind: 'CronWorkflow',
                name: cron.metadata.name ?? '',
                uid: cron.metadata.uid,
                blockOwnerDeletion: true,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: structuredClone(cron.spec.workflowSpec),
  } as Workflow;
}

/** The workflow of one scheduled run: named by its time, which its annotation also holds. */
export function runWorkflow(cron: CronWorkflow, name: string, scheduledAt: string): Workflow {
  const wf = workflowOfCron(cron);
  wf.metadata = { name, ...wf.metadata, annotations: { ...(wf.metadata.annotations ?? {}), [ANNOTATION_SCHEDULED_TIME]: scheduledAt } };
  return wf;
}

/** `cronworkflow.*` variables for `when`. */
function cronVariables(cron: CronWorkflow): Record<string, string> {
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  vars['cronworkflow.name'] = cron.metadata.name ?? '';
  vars['cronworkflow.namespace'] = cron.metadata.namespace ?? '';
  vars['cronworkflow.lastScheduledTime'] = cron.status?.lastScheduledTime ?? '';
  vars['cronworkflow.succeeded'] = String(cron.status?.succeeded ?? 0);
  vars['cronworkflow.failed'] = String(cron.status?.failed ?? 0);
  for (const [k, v] of Object.entries(cron.metadata.labels ?? {})) vars[`cronworkflow.labels.${k}`] = v;
  for (const [k, v] of Object.entries(cron.metadata.annotations ?? {})) vars[`cronworkflow.annotations.${k}`] = v;
  return vars;
}

function ref(cron: CronWorkflow, c: CronChild) {
  return { name: c.name, namespace: cron.metadata.namespace ?? '', ...(c.uid ? { uid: c.uid } : {}) };
}

/** Finished runs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`, oldest first. */
function overHistory(cron: CronWorkflow, children: readonly CronChild[]): string[] {
  const keep = (phaseOk: (p: string) => boolean, limit: number) =>
    children
      .filter((c) => FINAL.includes(c.phase ?? '') && phaseOk(c.phase!))
      .sort((a, b) => b.scheduledMs - a.scheduledMs || (a.name < b.name ? 1 : -1))
      .slice(Math.max(0, limit))
      .map((c) => c.name);
  return [
    ...keep((p) => p === 'Succeeded', cron.spec.successfulJobsHistoryLimit ?? DEFAULT_SUCCESSFUL_HISTORY),
    ...keep((p) => p !== 'Succeeded', cron.spec.failedJobsHistoryLimit ?? DEFAULT_FAILED_HISTORY),
  ].sort();
}
