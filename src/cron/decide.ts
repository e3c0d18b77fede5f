/**
 * What a CronWorkflow needs now, decided from its spec, its status, the workflows it started
 * and the time — pure, so the controller's cron reconciler (src/controller/cron-reconciler.ts)
 * only executes, and every rule here is unit-tested.
 *
 * One decision:
 * 1. runs it started that have ended are counted once (succeeded/failed) and leave `active`;
 * 2. the stop strategy (`stopStrategy.expression` over `cronworkflow.succeeded`/`failed`) may
 *    stop it for good (phase Stopped);
 * 3. the times due since `lastScheduledTime` (or its creation), unless suspended, per
 *    `catchUp.policy`: Latest (default, as Kubernetes CronJobs and the peer) the latest one;
 *    None the latest one only if it is on time (within a minute); All every one, oldest first,
 *    at most `catchUp.maxRuns` (the latest ones). A time is skipped when it is older than
 *    `startingDeadlineSeconds`, when `when` is false, or under Forbid while a run is active
 *    (policy All waits instead, and runs the missed times one after another); under Replace the
 *    active runs are stopped first. Each time is handled once: `lastScheduledTime` moves to it;
 * 4. the backfills of the spec start their next runs (src/cron/backfill.ts);
 * 5. finished scheduled runs beyond the history limits are deleted, oldest first (a backfill's
 *    runs are the user's to keep);
 * 6. it asks to be looked at again at its next scheduled time.
 *
 * A run is named `<cron>-<unix seconds of its scheduled time>`: creating it twice (a controller
 * restarted between the create and the status write) meets AlreadyExists and changes nothing.
 */
import { CATCH_UP_NONE_GRACE_MS, DEFAULT_CATCH_UP_RUNS, type CronWorkflow, type CronWorkflowStatus, type Workflow } from '../api/index.js';
import { evaluateRetryExpression, evaluateWhenText } from '../engine/index.js';
import { errorMessage } from '../log/error-message.js';
import { decideBackfills } from './backfill.js';
import { runWorkflow } from './run-workflow.js';
import { latestDue, latestDueN, MAX_SCHEDULES, nextOf, parseSchedule, type Schedule } from './schedule.js';

/** A workflow the CronWorkflow started, as the cache shows it. */
export interface CronChild {
  name: string;
  uid?: string;
  phase?: string;
  /** When it finished (RFC 3339), once it has. */
  finishedAt?: string;
  /** Its scheduled time (the annotation), ms. */
  scheduledMs: number;
  /** The backfill it belongs to (its label), if it does. */
  backfill?: string;
}

export interface CronDecision {
  /** The status to store (the whole of it). */
  status: CronWorkflowStatus;
  /** The workflows to create: the runs that start, oldest first. */
  create: Workflow[];
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
  const out: CronDecision = { status, create: [], stop: [], delete: [], notes: [] };
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
  for (const c of children)
    if (!c.backfill && !FINAL.includes(c.phase ?? '') && !active.some((a) => a.name === c.name)) active.push(ref(cron, c));
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

  // 3. The times due.
  const created = Date.parse(cron.metadata.creationTimestamp ?? '') || nowMs;
  const last = prev.lastScheduledTime ? Date.parse(prev.lastScheduledTime) : created;
  if (status.phase !== 'Stopped' && !spec.suspend) decideDue(cron, schedules.schedules, last, nowMs, out);

  // 4. Backfills.
  if (spec.backfills?.length || prev.backfills?.length) {
    const b = decideBackfills(cron, schedules.schedules, children, nowMs);
    out.create.push(...b.create);
    out.notes.push(...b.notes);
    if (b.status.length) status.backfills = b.status;
    else delete status.backfills;
  }

  // 5. History, 6. next look.
  out.delete = overHistory(cron, children);
  if (status.phase !== 'Stopped' && !spec.suspend) {
    const next = nextOf(schedules.schedules, Math.max(nowMs, last));
    if (next !== undefined) out.requeueAtMs = next;
  }
  return out;
}

/** The deadline (ms after its time) within which a run may still start, if there is one. */
function deadlineOf(cron: CronWorkflow): { ms: number; field: string } | undefined {
  const sds = cron.spec.startingDeadlineSeconds;
  const given = sds !== undefined && sds !== null ? Number(sds) * 1000 : undefined;
  if (cron.spec.catchUp?.policy === 'None' && (given === undefined || given > CATCH_UP_NONE_GRACE_MS))
    return { ms: CATCH_UP_NONE_GRACE_MS, field: `spec.catchUp.policy None (${CATCH_UP_NONE_GRACE_MS / 1000} s)` };
  return given === undefined ? undefined : { ms: given, field: `spec.startingDeadlineSeconds (${String(sds)})` };
}

/** Step 3: which of the times due since `last` run, per the catch-up policy. */
function decideDue(cron: CronWorkflow, schedules: readonly Schedule[], last: number, nowMs: number, out: CronDecision): void {
  if (cron.spec.catchUp?.policy !== 'All') {
    const due = latestDue(schedules, last, nowMs);
    if (due !== undefined) decideRun(cron, due, nowMs, out);
    return;
  }
  const max = cron.spec.catchUp.maxRuns ?? DEFAULT_CATCH_UP_RUNS;
  const { times, more } = latestDueN(schedules, last, nowMs, max);
  if (times.length === 0) return;
  const skipped: number[] = [];
  const deadline = deadlineOf(cron);
  let due = times.filter((t) => (deadline && nowMs - t > deadline.ms ? (skipped.push(t), false) : true));
  if (more)
    out.notes.push({
      type: 'Warning',
      reason: 'MissedSchedule',
      message: `more than ${max} scheduled times were missed since ${new Date(last).toISOString()}: the earlier ones were skipped, the latest ${max} are run (spec.catchUp.maxRuns)`,
    });
  if (skipped.length)
    out.notes.push({
      type: 'Warning',
      reason: 'MissedSchedule',
      message: `${skipped.length} missed runs (${new Date(skipped[0]!).toISOString()} to ${new Date(skipped[skipped.length - 1]!).toISOString()}) were skipped: they could not start within ${deadline!.field} of their time`,
    });
  const policy = cron.spec.concurrencyPolicy ?? 'Allow';
  if (policy === 'Replace' && due.length > 1) {
    out.notes.push({
      type: 'Normal',
      reason: 'ConcurrencyReplaced',
      message: `${due.length - 1} missed runs before ${new Date(due[due.length - 1]!).toISOString()} were skipped: each would replace the one before it (concurrencyPolicy Replace)`,
    });
    due = due.slice(-1);
  }
  if (due.length === 0) {
    out.status.lastScheduledTime = new Date(times[times.length - 1]!).toISOString();
    return;
  }
  if (policy === 'Forbid') {
    // One at a time: the oldest waits for the active runs; the next look (when they end) takes it.
    if (out.status.active!.length > 0) {
      // The times left out stay handled: the next look starts from the oldest kept one.
      if (more || skipped.length) out.status.lastScheduledTime = new Date(due[0]! - 1).toISOString();
      return;
    }
    due = due.slice(0, 1);
  }
  for (const t of due) decideRun(cron, t, nowMs, out, false);
}

function decideRun(cron: CronWorkflow, due: number, nowMs: number, out: CronDecision, checkDeadline = true): void {
  const spec = cron.spec;
  const active = out.status.active!;
  const at = new Date(due).toISOString();
  out.status.lastScheduledTime = at;
  const deadline = checkDeadline ? deadlineOf(cron) : undefined;
  if (deadline && nowMs - due > deadline.ms) {
    out.notes.push({
      type: 'Warning',
      reason: 'MissedSchedule',
      message: `the run scheduled at ${at} was skipped: it could not start within ${deadline.field} of its time`,
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
  const wf = runWorkflow(cron, due);
  const name = wf.metadata.name!;
  out.create.push(wf);
  out.status.active = [...active, { name, namespace: cron.metadata.namespace ?? '' }];
  out.notes.push({ type: 'Normal', reason: 'WorkflowCreated', message: `started ${name} for the run scheduled at ${at}` });
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
      .filter((c) => !c.backfill && FINAL.includes(c.phase ?? '') && phaseOk(c.phase!))
      .sort((a, b) => b.scheduledMs - a.scheduledMs || (a.name < b.name ? 1 : -1))
      .slice(Math.max(0, limit))
      .map((c) => c.name);
  return [
    ...keep((p) => p === 'Succeeded', cron.spec.successfulJobsHistoryLimit ?? DEFAULT_SUCCESSFUL_HISTORY),
    ...keep((p) => p !== 'Succeeded', cron.spec.failedJobsHistoryLimit ?? DEFAULT_FAILED_HISTORY),
  ].sort();
}
