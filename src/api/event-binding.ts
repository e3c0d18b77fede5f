/**
 * WorkflowEventBinding (spec document 000, "Event binding"). `clusterScope` on the template
 * reference is our answer to the spec's "field that references a cluster workflow template: not
 * shown" — the same flag TemplateRef uses.
 */
import type { ObjectMeta, StringMap } from './container.js';
import type { Arguments } from './parameter.js';
import type { WorkflowTemplateRef } from './workflow.js';

export interface WorkflowEventBindingSpec {
  event: {
    /** Expression over `payload`, `metadata`, `discriminator`; true matches. */
    selector: string;
  };
  submit?: {
    workflowTemplateRef: WorkflowTemplateRef;
    /** `parameters[].valueFrom.event` are expressions over the event. */
    arguments?: Arguments;
    /** Every value is an expression that must yield a string. */
    metadata?: { name?: string; labels?: StringMap; annotations?: StringMap };
  };
}

export interface WorkflowEventBinding {
  apiVersion?: string;
  kind?: 'WorkflowEventBinding';
  metadata: ObjectMeta;
  spec: WorkflowEventBindingSpec;
}
