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

export interface WorkflowTaskSet {
  apiVersion?: string;
  kind?: 'WorkflowTaskSet';
  metadata: ObjectMeta;
  spec: {
    /** Node id → resolved template (plugin or http). */
    tasks?: Record<string, Template>;
  };
  status?: {
    /** Node id → result reported by the agent. */
    nodes?: Record<string, NodeResult>;
  };
}

/** True once the controller marked the TaskSet completed (the agent then exits). */
export function isTaskSetCompleted(ts: Pick<WorkflowTaskSet, 'metadata'>): boolean {
  return ts.metadata.labels?.[LABEL_COMPLETED] === 'true';
}

/** The labels to merge into a TaskSet to mark it completed. */
export function taskSetCompletedLabels(): Record<string, string> {
  return { [LABEL_COMPLETED]: 'true' };
}
