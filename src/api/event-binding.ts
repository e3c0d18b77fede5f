/**
 * WorkflowEventBinding (spec document 000, "Event binding"). `clusterScope` on the template
 * reference is our answer to the spec's "field that references a cluster workflow template: not
 * shown" — the same flag TemplateRef uses. Each record is declared once (record-declaration.ts).
 */
import type { ObjectMeta, StringMap } from './container.js';
import { bool, str, stringMap } from './crd/schema-builders.js';
import { ok } from './field-rules.js';
import { WORKFLOW_ARGUMENTS_RECORD, type Arguments } from './parameter.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';
import type { WorkflowTemplateRef } from './workflow.js';

export const EVENT_SELECTOR_RECORD = record('EventSelector', {
  /** Expression over `payload`, `metadata`, `discriminator`; true matches. */
  selector: field<string>(
    str({ minLength: 1, description: 'Expression over payload, metadata and discriminator; true matches.' }),
  ).required(),
  /** Expression over the event giving its id (over the X-Event-Id / X-GitHub-Delivery / Ce-Id headers). */
  id: field<string>(
    str({
      minLength: 1,
      description:
        'Expression over the event giving its id; one workflow per binding per id (default: the X-Event-Id, X-GitHub-Delivery or Ce-Id header).',
    }),
    ok('one workflow per binding per event id, named from it, so a redelivered event submits nothing twice'),
  ),
});

/** The (Cluster)WorkflowTemplate a binding submits; its name may not be empty here. */
export const EVENT_TEMPLATE_REF_RECORD = record('EventWorkflowTemplateRef', {
  name: field<string>(str({ minLength: 1 })).required(),
  clusterScope: field<boolean>(bool({ description: 'The template is a ClusterWorkflowTemplate.' })),
});

/** Every value is an expression that must yield a string. */
export const EVENT_SUBMIT_METADATA_RECORD = record(
  'EventSubmitMetadata',
  {
    name: field<string>(str(), ok('an expression over the event')),
    labels: field<StringMap>(stringMap(), ok('values are expressions over the event')),
    annotations: field<StringMap>(stringMap(), ok('values are expressions over the event')),
  },
  { description: 'Every value is an expression that must yield a string.' },
);

export const EVENT_SUBMIT_RECORD = record('EventSubmit', {
  workflowTemplateRef: ref<WorkflowTemplateRef>(EVENT_TEMPLATE_REF_RECORD).required(),
  /** `parameters[].valueFrom.event` are expressions over the event. */
  arguments: ref<Arguments>(WORKFLOW_ARGUMENTS_RECORD),
  metadata: ref<RecordOf<typeof EVENT_SUBMIT_METADATA_RECORD.fields>>(EVENT_SUBMIT_METADATA_RECORD),
});

export const WORKFLOW_EVENT_BINDING_SPEC_RECORD = record('WorkflowEventBindingSpec', {
  event: ref<RecordOf<typeof EVENT_SELECTOR_RECORD.fields>>(EVENT_SELECTOR_RECORD).required(),
  submit: ref<RecordOf<typeof EVENT_SUBMIT_RECORD.fields>>(EVENT_SUBMIT_RECORD),
});
export interface WorkflowEventBindingSpec extends RecordOf<typeof WORKFLOW_EVENT_BINDING_SPEC_RECORD.fields> {}

export interface WorkflowEventBinding {
  apiVersion?: string;
  kind?: 'WorkflowEventBinding';
  metadata: ObjectMeta;
  spec: WorkflowEventBindingSpec;
}
