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
/** The annotation holding the scheduled time a workflow was started for (RFC 3339). */
export const ANNOTATION_SCHEDULED_TIME = 'workflows.plugflow.io/scheduled-time';
