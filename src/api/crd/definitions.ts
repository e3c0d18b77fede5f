/**
 * The CustomResourceDefinitions of plugflow: one source of truth from which hack/gen-crds.ts
 * writes crds/*.yaml (and the unit test checks that the files match).
 */
import { GROUP, PLURAL, VERSION } from '../constants.js';
import { cronWorkflowRootSchema, eventBindingRootSchema, taskSetRootSchema, workflowRootSchema } from './resource-schemas.js';
import type { Schema } from './schema-builders.js';

/** Every plugflow CRD is in this category: `kubectl get plugflow` lists them all. */
export const CRD_CATEGORY = 'plugflow';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'date' | 'integer' | 'number' | 'boolean';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: Schema };
      subresources?: { status?: Record<string, never> };
      additionalPrinterColumns?: PrinterColumn[];
    }>;
  };
}

interface Definition {
  kind: string;
  plural: string;
  shortName: string;
  scope: 'Namespaced' | 'Cluster';
  description: string;
  schema: Schema;
  status: boolean;
  columns: PrinterColumn[];
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const DEFINITIONS: Definition[] = [
  {
    kind: 'Workflow',
    plural: PLURAL.workflow,
    shortName: 'wf',
    scope: 'Namespaced',
    description: 'A workflow: templates to run, from an entrypoint, with arguments; its status holds the nodes.',
    schema: workflowRootSchema(true),
    // No status subresource: status and the labels that mirror it go in one write, guarded by
    // manifests/base/workflow-status-policy.yaml (docs/workflow-status.md).
    status: false,
    columns: [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Phase of the workflow.' },
      AGE,
      { name: 'Message', type: 'string', jsonPath: '.status.message', description: 'Why the workflow is in this phase.' },
    ],
  },
  {
    kind: 'WorkflowTemplate',
    plural: PLURAL.workflowTemplate,
    shortName: 'wftmpl',
    scope: 'Namespaced',
    description: 'Templates that workflows in this namespace reference or are submitted from.',
    schema: workflowRootSchema(false),
    status: false,
    columns: [AGE],
  },
  {
    kind: 'ClusterWorkflowTemplate',
    plural: PLURAL.clusterWorkflowTemplate,
    shortName: 'cwftmpl',
    scope: 'Cluster',
    description: 'Templates that workflows in every namespace can reference or be submitted from.',
    schema: workflowRootSchema(false),
    status: false,
    columns: [AGE],
  },
  {
    kind: 'WorkflowEventBinding',
    plural: PLURAL.workflowEventBinding,
    shortName: 'wfeb',
    scope: 'Namespaced',
    description: 'Submits a workflow from a template when an event matching its selector arrives.',
    schema: eventBindingRootSchema,
    status: false,
    columns: [
      { name: 'Template', type: 'string', jsonPath: '.spec.submit.workflowTemplateRef.name' },
      { name: 'Selector', type: 'string', jsonPath: '.spec.event.selector', priority: 1 },
      AGE,
    ],
  },
  {
    kind: 'CronWorkflow',
    plural: PLURAL.cronWorkflow,
    shortName: 'cwf',
    scope: 'Namespaced',
    description: 'Starts a workflow from its workflowSpec at each time its schedule names.',
    schema: cronWorkflowRootSchema,
    status: true,
    columns: [
      { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule' },
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend' },
      { name: 'Last', type: 'date', jsonPath: '.status.lastScheduledTime', description: 'The last scheduled time handled.' },
      AGE,
    ],
  },
  {
    kind: 'WorkflowTaskSet',
    plural: PLURAL.workflowTaskSet,
    shortName: 'wfts',
    scope: 'Namespaced',
    description: 'Plugin and http tasks of one workflow (spec, by the controller) and their results (status, by the agent).',
    schema: taskSetRootSchema,
    status: true,
    columns: [AGE],
  },
];

function build(def: Definition): CustomResourceDefinition {
  const singular = def.kind.toLowerCase();
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular,
        shortNames: [def.shortName],
        categories: [CRD_CATEGORY],
      },
      scope: def.scope,
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { description: def.description, ...def.schema } },
          ...(def.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: def.columns,
        },
      ],
    },
  };
}

/** All plugflow CRDs, in a stable order. */
export function crdDefinitions(): CustomResourceDefinition[] {
  return DEFINITIONS.map(build);
}
