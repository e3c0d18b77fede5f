/**
 * Schemas of the resources: the spec (and status) of Workflow, WorkflowTemplate,
 * ClusterWorkflowTemplate, CronWorkflow, WorkflowEventBinding and WorkflowTaskSet. Every spec is
 * derived from its record declaration (src/api/record-declaration.ts); only the root objects are
 * written here.
 */
import { CRON_WORKFLOW_SPEC_RECORD } from '../cron-workflow.js';
import { WORKFLOW_EVENT_BINDING_SPEC_RECORD } from '../event-binding.js';
import { TASK_SET_SPEC_RECORD, TASK_SET_STATUS_RECORD } from '../taskset.js';
import { WORKFLOW_SPEC_RECORD } from '../workflow.js';
import { obj, openObject, str, type Schema } from './schema-builders.js';

/**
 * WorkflowSpec, derived from its declaration (src/api/workflow.ts). Its node keeps unknown fields:
 * documents written for the peer system use many more, and the validator names them.
 */
export const workflowSpecSchema: Schema = WORKFLOW_SPEC_RECORD.schema;

/**
 * Written by the controller; kept as is (its shape is owned by the engine). Atomic for field
 * management: otherwise the API server tracks every field of every node in managedFields (3.4 KB
 * of a finished 10-node DAG's 7.4 KB), recomputes them on each write and sends them to every
 * watcher — the largest part of what a workflow costs the API server (bench/RESULTS.md, peer).
 */
export const workflowStatusSchema: Schema = openObject({ 'x-kubernetes-map-type': 'atomic' });

export function workflowRootSchema(withStatus: boolean): Schema {
  const properties: Record<string, Schema> = {
    apiVersion: str(),
    kind: str(),
    metadata: { type: 'object' },
    // A workflow's spec is written once, when it is submitted: atomic too (as above), so its
    // managedFields entry is one field, not every field of every template.
    spec: withStatus ? { ...workflowSpecSchema, 'x-kubernetes-map-type': 'atomic' } : workflowSpecSchema,
  };
  if (withStatus) properties.status = workflowStatusSchema;
  return obj(properties, { required: ['spec'] });
}

/** CronWorkflow (src/api/cron-workflow.ts): a schedule and the workflow spec it starts. */
export const cronWorkflowRootSchema: Schema = obj(
  { apiVersion: str(), kind: str(), metadata: { type: 'object' }, spec: CRON_WORKFLOW_SPEC_RECORD.schema, status: openObject() },
  { required: ['spec'] },
);

/** WorkflowEventBinding (src/api/event-binding.ts). */
export const eventBindingRootSchema: Schema = obj(
  { apiVersion: str(), kind: str(), metadata: { type: 'object' }, spec: WORKFLOW_EVENT_BINDING_SPEC_RECORD.schema },
  { required: ['spec'] },
);

/** WorkflowTaskSet (src/api/taskset.ts): written by the controller (spec) and the agent (status). */
export const taskSetRootSchema: Schema = obj({
  apiVersion: str(),
  kind: str(),
  metadata: { type: 'object' },
  spec: TASK_SET_SPEC_RECORD.schema,
  status: TASK_SET_STATUS_RECORD.schema,
});
