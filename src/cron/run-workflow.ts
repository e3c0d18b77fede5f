/**
 * The Workflow a CronWorkflow starts: for a scheduled time (the schedule, a catch-up, a backfill)
 * or by hand (`plugflow submit --from cronwf/NAME`). One builder, so that every run carries the
 * same labels, owner and spec whoever starts it.
 */
import { ANNOTATION_SCHEDULED_TIME, LABEL_CRON_WORKFLOW, LABEL_SCHEDULED_TIME, type CronWorkflow, type Workflow } from '../api/index.js';

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

/** The name of the run of a scheduled time: the same whoever starts it, so a time runs once. */
export function runName(cron: CronWorkflow, scheduledMs: number): string {
  return `${cron.metadata.name ?? ''}-${Math.floor(scheduledMs / 1000)}`;
}

/** `20261207T100000Z`: a scheduled time as a label value (UTC, sortable). */
export function scheduledTimeLabel(scheduledMs: number): string {
  return new Date(scheduledMs)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/**
 * The workflow of one scheduled time: named by it, labelled with it (`scheduled-time`, and any
 * `labels` given, as a backfill's name), annotated with it in RFC 3339, which
 * `{{workflow.scheduledTime}}` reads.
 */
export function runWorkflow(cron: CronWorkflow, scheduledMs: number, labels: Record<string, string> = {}): Workflow {
  const wf = workflowOfCron(cron);
  wf.metadata = {
    name: runName(cron, scheduledMs),
    ...wf.metadata,
    labels: { ...wf.metadata.labels, ...labels, [LABEL_SCHEDULED_TIME]: scheduledTimeLabel(scheduledMs) },
    annotations: { ...(wf.metadata.annotations ?? {}), [ANNOTATION_SCHEDULED_TIME]: new Date(scheduledMs).toISOString() },
  };
  return wf;
}
