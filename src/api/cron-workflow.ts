/**
 * CronWorkflow: a workflow started on a schedule (COMPAT: the peer's CronWorkflow). The
 * controller's cron reconciler (src/controller/cron/) creates one Workflow per scheduled time,
 * named `<cron>-<unix seconds of the time>` so that a restarted controller never starts the same
 * run twice, labelled `workflows.plugflow.io/cron-workflow: <cron>`.
 */
import { METADATA_RECORD, type Metadata } from './common-records.js';
import { arr, bool, int32, int64, oneOfStrings, str } from './crd/schema-builders.js';
import { ok } from './field-rules.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';
import { WORKFLOW_SPEC_RECORD, type WorkflowSpec } from './workflow.js';

export const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'] as const;
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];

/**
 * Most schedules one CronWorkflow may list (`schedule` and `schedules` together). This and the two
 * lengths below bound what a tenant's object costs the shared controller (the CRD schema, the
 * create check and the controller all hold them).
 */
export const MAX_SCHEDULES = 20;
/** Longest schedule expression, in characters (the longest sensible six-field one is ~100). */
export const MAX_SCHEDULE_LENGTH = 256;
/** Longest timezone name (IANA names are under 40). */
export const MAX_TIMEZONE_LENGTH = 64;

export const STOP_STRATEGY_RECORD = record('StopStrategy', {
  expression: field<string>(str(), ok('over cronworkflow.succeeded and cronworkflow.failed: once true, no run starts again')),
  /** The peer's older name of expression. */
  condition: field<string>(str(), ok("the peer's older name of expression")),
});

export const CATCH_UP_POLICIES = ['None', 'Latest', 'All'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];
/** Default and largest `catchUp.maxRuns`: the missed times one look may start. */
export const DEFAULT_CATCH_UP_RUNS = 10;
export const MAX_CATCH_UP_RUNS = 100;
/** Under catchUp None a time is on time within this of it (or startingDeadlineSeconds when smaller). */
export const CATCH_UP_NONE_GRACE_MS = 60_000;

/**
 * What happens to the times missed while the controller was down or the CronWorkflow suspended
 * (plugflow's; the peer has only startingDeadlineSeconds, which is policy Latest).
 */
export const CATCH_UP_RECORD = record(
  'CatchUp',
  {
    /** None: only a run on time starts; Latest (default): the latest missed time runs; All: every missed time runs, oldest first. */
    policy: field<CatchUpPolicy>(oneOfStrings(CATCH_UP_POLICIES)),
    /** Policy All: at most this many missed times run (the latest ones); default 10, at most 100. */
    maxRuns: field<number>(int32({ minimum: 1, maximum: MAX_CATCH_UP_RUNS })),
  },
  {
    'x-kubernetes-validations': [
      { rule: "!has(self.maxRuns) || (has(self.policy) && self.policy == 'All')", message: 'maxRuns applies only to policy All' },
    ],
  },
);

/** Most runs one backfill may ask for, and most backfills a CronWorkflow keeps. */
export const MAX_BACKFILL_RUNS = 1000;
export const MAX_BACKFILLS = 20;
export const MAX_BACKFILL_PARALLEL = 100;

/**
 * A backfill: the runs of every scheduled time in [from, to], started `parallel` at a time by the
 * controller. Kept in the spec after it completes, so that asking again for the same range (or
 * part of it) starts nothing new.
 */
export const BACKFILL_RECORD = record('Backfill', {
  /** Its name, unique in the CronWorkflow; its runs are labelled with it. */
  name: field<string>(str({ maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' })).required(),
  /** The first time of the range (RFC 3339), inclusive. */
  from: field<string>(str({ format: 'date-time' })).required(),
  /** The last time of the range (RFC 3339), inclusive. */
  to: field<string>(str({ format: 'date-time' })).required(),
  /** Runs of this backfill running at once; default 1. */
  parallel: field<number>(int32({ minimum: 1, maximum: MAX_BACKFILL_PARALLEL })),
});
export interface Backfill extends RecordOf<typeof BACKFILL_RECORD.fields> {}

export const CRON_WORKFLOW_SPEC_RECORD = record('CronWorkflowSpec', {
  /** A cron expression (5 fields, or 6 with seconds first), a descriptor (`@hourly`) or `@every 30s`. */
  schedule: field<string>(
    str({
      description: 'Cron expression (5 fields, or 6 with seconds first), @hourly-style descriptor, or @every <duration>.',
      maxLength: MAX_SCHEDULE_LENGTH,
    }),
  ),
  /** Several schedules; a run starts at each time any of them fires. */
  schedules: field<string[]>(
    arr(str({ maxLength: MAX_SCHEDULE_LENGTH }), {
      maxItems: MAX_SCHEDULES,
      description: `Several schedules (at most ${MAX_SCHEDULES} with schedule); a run starts at each time any of them fires.`,
    }),
  ),
  /** IANA time zone the schedules are read in; UTC when empty. */
  timezone: field<string>(str({ description: 'IANA time zone of the schedules; UTC when empty.', maxLength: MAX_TIMEZONE_LENGTH })),
  /** What happens when a run is due while earlier runs still run. Default Allow. */
  concurrencyPolicy: field<ConcurrencyPolicy>(oneOfStrings(CONCURRENCY_POLICIES)),
  /** A run that could not start within this many seconds of its time (controller down) is skipped. */
  startingDeadlineSeconds: field<number>(int64({ minimum: 0 })),
  /** What happens to times missed while the controller was down or it was suspended. */
  catchUp: ref<RecordOf<typeof CATCH_UP_RECORD.fields>>(CATCH_UP_RECORD),
  /** Ranges of past scheduled times to run (`plugflow cron backfill`). */
  backfills: ref<Backfill[]>(BACKFILL_RECORD, 'list', undefined, { extra: { maxItems: MAX_BACKFILLS } }),
  /** Finished runs kept, by outcome; older ones are deleted. Defaults 3 and 1. */
  successfulJobsHistoryLimit: field<number>(int32({ minimum: 0 })),
  failedJobsHistoryLimit: field<number>(int32({ minimum: 0 })),
  /** No run starts while true. */
  suspend: field<boolean>(bool()),
  /** An expression over `cronworkflow.succeeded`/`failed`: once true, no run starts again (status.phase Stopped). */
  stopStrategy: ref<RecordOf<typeof STOP_STRATEGY_RECORD.fields>>(STOP_STRATEGY_RECORD),
  /** An expression evaluated at each scheduled time; a run starts only when it is true. */
  when: field<string>(str()),
  workflowSpec: ref<WorkflowSpec>(WORKFLOW_SPEC_RECORD).required(),
  /** Labels and annotations of every workflow it starts. */
  workflowMetadata: ref<Metadata>(METADATA_RECORD),
});
export interface CronWorkflowSpec extends RecordOf<typeof CRON_WORKFLOW_SPEC_RECORD.fields> {}

export interface CronWorkflowStatus {
  /** Unfinished workflows it started. */
  active?: { name: string; namespace: string; uid?: string }[];
  /** The last scheduled time a run was started (or deliberately skipped) for. */
  lastScheduledTime?: string;
  succeeded?: number;
  failed?: number;
  /** Active, or Stopped by the stop strategy. */
  phase?: 'Active' | 'Stopped';
  conditions?: { type: string; status: string; message?: string; lastTransitionTime?: string }[];
  /** The progress of each backfill of the spec, by name. */
  backfills?: BackfillStatus[];
}

export interface BackfillStatus {
  name: string;
  /** Scheduled times in its range (less those an earlier backfill covers). */
  total: number;
  /** Runs started (or found already there). */
  started: number;
  /** The next scheduled time to start (RFC 3339); gone once every run has started. */
  next?: string;
  /** Running until every run has started and ended; Complete then. Failed: its range could not be read. */
  phase: 'Running' | 'Complete' | 'Failed';
  message?: string;
  /** Its runs started and not yet seen ended (the bound `parallel` counts these). */
  running?: string[];
  /** When the controller last started one of its runs (RFC 3339). */
  startedAt?: string;
}

export interface CronWorkflow {
  apiVersion?: string;
  kind?: 'CronWorkflow';
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  spec: CronWorkflowSpec;
  status?: CronWorkflowStatus;
}

/** The label that ties a workflow to the CronWorkflow that started it. */
export const LABEL_CRON_WORKFLOW = 'workflows.plugflow.io/cron-workflow';
/** The label holding a run's scheduled time in UTC, `20261207T100000Z` (sortable, selectable). */
export const LABEL_SCHEDULED_TIME = 'workflows.plugflow.io/scheduled-time';
/** The label naming the backfill a run belongs to. */
export const LABEL_BACKFILL = 'workflows.plugflow.io/backfill';
/** The annotation holding the scheduled time a workflow was started for (RFC 3339). */
export const ANNOTATION_SCHEDULED_TIME = 'workflows.plugflow.io/scheduled-time';
