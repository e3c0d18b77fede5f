/**
 * Schemas of the five resources: the spec (and status) of Workflow, WorkflowTemplate,
 * ClusterWorkflowTemplate, WorkflowEventBinding and WorkflowTaskSet.
 */
import { MAX_SCHEDULE_LENGTH, MAX_SCHEDULES, MAX_TIMEZONE_LENGTH } from '../cron-workflow.js';
import { SHUTDOWN_STRATEGIES } from '../values/enums.js';
import {
  arr,
  bool,
  int32,
  int64,
  keyedList,
  mapOf,
  obj,
  oneOfStrings,
  openObject,
  str,
  stringMap,
  type Schema,
} from './schema-builders.js';
import { argumentsSchema, lifecycleHooksSchema, metadataSchema, retryStrategySchema, templateSchema } from './template-schema.js';

/**
 * spec.executorPlugins (workflow-level executor plugins): metadata is kept whole so that the
 * engine's validator names a field plugflow does not read; the container is kept open and checked
 * field by field by the plugin shape (src/plugins/workflow-plugins.ts), as in a plugin ConfigMap.
 */
const executorPluginsSchema: Schema = arr(
  obj(
    {
      metadata: obj({ name: str(), namespace: str(), generateName: str(), labels: stringMap(), annotations: stringMap() }, { open: true }),
      spec: obj(
        { sidecar: obj({ automountServiceAccountToken: bool(), container: openObject() }, { required: ['container'] }) },
        { required: ['sidecar'] },
      ),
    },
    { required: ['metadata', 'spec'] },
  ),
  {
    description:
      "Executor plugins declared in the workflow (sidecars of its agent pod). Needs the controller's WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true; when non-empty they replace the ConfigMap plugins for this workflow.",
  },
);

/**
 * WorkflowSpec. The spec does not list its fields, so unknown ones are kept (documents written for
 * the peer system use many more); the fields below are the ones plugflow reads and types.
 */
export const workflowSpecSchema: Schema = obj(
  {
    templates: keyedList(templateSchema, 'name', { description: 'The templates; names are unique.' }),
    entrypoint: str({ description: 'Name of the template to start.' }),
    arguments: argumentsSchema,
    workflowTemplateRef: obj({ name: str(), clusterScope: bool() }, { required: ['name'] }),
    serviceAccountName: str(),
    automountServiceAccountToken: bool(),
    executor: obj({ serviceAccountName: str() }),
    executorPlugins: executorPluginsSchema,
    volumes: arr(openObject()),
    volumeClaimTemplates: arr(openObject()),
    parallelism: int64(),
    suspend: bool(),
    shutdown: oneOfStrings(SHUTDOWN_STRATEGIES),
    nodeSelector: stringMap(),
    affinity: openObject(),
    tolerations: arr(openObject()),
    imagePullSecrets: arr(openObject()),
    onExit: str(),
    hooks: lifecycleHooksSchema,
    activeDeadlineSeconds: int64(),
    priority: int32(),
    podGC: openObject(),
    ttlStrategy: openObject(),
    securityContext: openObject(),
    podSpecPatch: str(),
    podResources: openObject({ description: "Kubernetes' ResourceRequirements: pod-level resources of every step pod." }),
    resourceClaims: arr(openObject(), { description: "Kubernetes' PodResourceClaims: DRA claims of every step pod." }),
    metrics: openObject(),
    synchronization: openObject(),
    retryStrategy: retryStrategySchema,
    podMetadata: metadataSchema,
    templateDefaults: openObject(),
    workflowMetadata: openObject(),
  },
  { open: true },
);

/** Written by the controller; kept as is (its shape is owned by the engine). */
export const workflowStatusSchema: Schema = openObject();

export function workflowRootSchema(withStatus: boolean): Schema {
  const properties: Record<string, Schema> = {
    apiVersion: str(),
    kind: str(),
    metadata: { type: 'object' },
    spec: workflowSpecSchema,
  };
  if (withStatus) properties.status = workflowStatusSchema;
  return obj(properties, { required: ['spec'] });
}

/** CronWorkflow (src/api/cron-workflow.ts): a schedule and the workflow spec it starts. */
export const cronWorkflowRootSchema: Schema = obj(
  {
    apiVersion: str(),
    kind: str(),
    metadata: { type: 'object' },
    spec: obj(
      {
        schedule: str({
          description: 'Cron expression (5 fields, or 6 with seconds first), @hourly-style descriptor, or @every <duration>.',
          maxLength: MAX_SCHEDULE_LENGTH,
        }),
        schedules: arr(str({ maxLength: MAX_SCHEDULE_LENGTH }), {
          maxItems: MAX_SCHEDULES,
          description: `Several schedules (at most ${MAX_SCHEDULES} with schedule); a run starts at each time any of them fires.`,
        }),
        timezone: str({ description: 'IANA time zone of the schedules; UTC when empty.', maxLength: MAX_TIMEZONE_LENGTH }),
        concurrencyPolicy: oneOfStrings(['Allow', 'Forbid', 'Replace']),
        startingDeadlineSeconds: int64({ minimum: 0 }),
        successfulJobsHistoryLimit: int32({ minimum: 0 }),
        failedJobsHistoryLimit: int32({ minimum: 0 }),
        suspend: bool(),
        stopStrategy: obj({ expression: str(), condition: str() }),
        when: str(),
        workflowSpec: workflowSpecSchema,
        workflowMetadata: metadataSchema,
      },
      { required: ['workflowSpec'] },
    ),
    status: openObject(),
  },
  { required: ['spec'] },
);

export const eventBindingRootSchema: Schema = obj(
  {
    apiVersion: str(),
    kind: str(),
    metadata: { type: 'object' },
    spec: obj(
      {
        event: obj(
          {
            selector: str({
              minLength: 1,
              description: 'Expression over payload, metadata and discriminator; true matches.',
            }),
          },
          { required: ['selector'] },
        ),
        submit: obj(
          {
            workflowTemplateRef: obj(
              {
                name: str({ minLength: 1 }),
                clusterScope: bool({ description: 'The template is a ClusterWorkflowTemplate.' }),
              },
              { required: ['name'] },
            ),
            arguments: argumentsSchema,
            metadata: obj(
              { name: str(), labels: stringMap(), annotations: stringMap() },
              { description: 'Every value is an expression that must yield a string.' },
            ),
          },
          { required: ['workflowTemplateRef'] },
        ),
      },
      { required: ['event'] },
    ),
  },
  { required: ['spec'] },
);

export const taskSetRootSchema: Schema = obj({
  apiVersion: str(),
  kind: str(),
  metadata: { type: 'object' },
  spec: obj({
    tasks: mapOf(openObject(), { description: 'Node id to resolved template, written by the controller.' }),
  }),
  status: obj({
    nodes: mapOf(obj({ phase: str(), message: str(), outputs: openObject(), progress: str() }, { open: true }), {
      description: 'Node id to result, written by the agent.',
    }),
  }),
});
