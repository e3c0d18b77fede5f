/**
 * WorkflowTaskSet: the mailbox between controller and agent, one per workflow with the same
 * name, owned by it. The controller writes `spec.tasks`, the agent writes `status.nodes`.
 *
 * Completion is marked with the label LABEL_COMPLETED=`true` (not a spec field) because a label
 * can be used in a watch's label selector, so a finished agent can stop watching cheaply and
 * list calls can skip finished TaskSets.
 */
import { LABEL_COMPLETED } from './constants.js';
import type { ObjectMeta } from './container.js';
import type { NodeResult } from './plugin.js';
import type { Template } from './template.js';
import { mapOf, obj, openObject, str } from './crd/schema-builders.js';
import { field, record, type RecordOf } from './record-declaration.js';

/** What the controller writes: the tasks the agent runs. */
export const TASK_SET_SPEC_RECORD = record('WorkflowTaskSetSpec', {
  /** Node id → resolved template (plugin or http). */
  tasks: field<Record<string, Template>>(mapOf(openObject(), { description: 'Node id to resolved template, written by the controller.' })),
});

/** What the agent writes: a result per node (the plugin reply's node, kept open). */
export const TASK_SET_STATUS_RECORD = record('WorkflowTaskSetStatus', {
  /** Node id → result reported by the agent. */
  nodes: field<Record<string, NodeResult>>(
    mapOf(obj({ phase: str(), message: str(), outputs: openObject(), progress: str() }, { open: true }), {
      description: 'Node id to result, written by the agent.',
    }),
  ),
});

export interface WorkflowTaskSet {
  apiVersion?: string;
  kind?: 'WorkflowTaskSet';
  metadata: ObjectMeta;
  spec: RecordOf<typeof TASK_SET_SPEC_RECORD.fields>;
  status?: RecordOf<typeof TASK_SET_STATUS_RECORD.fields>;
}

/** True once the controller marked the TaskSet completed (the agent then exits). */
export function isTaskSetCompleted(ts: Pick<WorkflowTaskSet, 'metadata'>): boolean {
  return ts.metadata.labels?.[LABEL_COMPLETED] === 'true';
}

/** The labels to merge into a TaskSet to mark it completed. */
export function taskSetCompletedLabels(): Record<string, string> {
  return { [LABEL_COMPLETED]: 'true' };
}
