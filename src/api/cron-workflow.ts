/**
 * CronWorkflow: a workflow started on a schedule (COMPAT: the peer's CronWorkflow). The
 * controller's cron reconciler (src/controller/cron/) creates one Workflow per scheduled time,
 * named `<cron>-<unix seconds of the time>` so that a restarted controller never starts the same
 * run twice, labelled `workflows.plugflow.io/cron-workflow: <cron>`.
 */
import type { Metadata } from './template.js';
import type { WorkflowSpec } from './workflow.js';

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';

export interface CronWorkflowSpec {
  /** A cron expression (5 fields, or 6 with seconds first), a descriptor (`@hourly`) or `@every 30s`. */
  schedule?: string;
  /** Several schedules; a run starts at each time any of them fires. */
  schedules?: string[];
  /** IANA time zone the schedules are read in; UTC when empty. */
  timezone?: string;
  /** What happens when a run is due while earlier runs still run. Default Allow. */
  concurrencyPolicy?: ConcurrencyPolicy;
  /** A run that could not start within this many seconds of its time (controller down) is skipped. */
  startingDeadlineSeconds?: number;
  /** Finished runs kept, by outcome; older ones are deleted. Defaults 3 and 1. */
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  /** No run starts while true. */
  suspend?: boolean;
  /** An expression over `cronworkflow.succeeded`/`failed`: once true, no run starts again (status.phase Stopped). */
  stopStrategy?: { expression?: string; condition?: string };
  /** An expression evaluated at each scheduled time; a run starts only when it is true. */
  when?: string;
  workflowSpec: WorkflowSpec;
  /** Labels and annotations of every workflow it starts. */
  workflowMetadata?: Metadata;
}

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
