/**
 * The Template record (spec document 001, "Template"), its retry strategy and the metadata a
 * template gives its pod. A template has exactly one kind section (container, script, dag,
 * steps, suspend, resource, http, plugin, containerSet, data): the CRD's CEL rule and the
 * validator check that. Each record is declared once (record-declaration.ts): its type, CRD
 * schema and catalogue rules derive from the declaration below.
 */
import { ARCHIVE_LOCATION_RECORD, type ArtifactLocation } from './artifact.js';
import { METADATA_RECORD, type Metadata } from './common-records.js';
import {
  CONTAINER_RECORD,
  SCRIPT_TEMPLATE_RECORD,
  USER_CONTAINER_RECORD,
  type Container,
  type ScriptTemplate,
  type UserContainer,
} from './container-records.js';
import type { PodSecurityContext, ResourceRequirements, StringMap } from './container.js';
import {
  arr,
  bool,
  emptyObject,
  fieldName,
  int32,
  int64,
  intOrString,
  obj,
  oneOfStrings,
  openObject,
  str,
  stringMap,
} from './crd/schema-builders.js';
import { KUBE, no, ok, POD_RESOURCES_NOTE, rec, RESOURCE_CLAIMS_NOTE } from './field-rules.js';
import { INPUTS_RECORD, OUTPUTS_RECORD, type Inputs, type Outputs } from './parameter.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';
import type { Affinity, HostAlias, Toleration } from './scheduling.js';
import { DAG_TEMPLATE_RECORD, WORKFLOW_STEP_RECORD, type DAGTemplate, type ParallelSteps } from './template-calls.js';
import {
  MEMOIZE_RECORD,
  METRICS_RECORD,
  SYNCHRONIZATION_RECORD,
  type Memoize,
  type Metrics,
  type Synchronization,
} from './template-runtime.js';
import {
  CONTAINER_SET_TEMPLATE_RECORD,
  DATA_RECORD,
  HTTP_RECORD,
  RESOURCE_TEMPLATE_RECORD,
  SUSPEND_TEMPLATE_RECORD,
  type ContainerSetTemplate,
  type Data,
  type HTTP,
  type ResourceTemplate,
  type SuspendTemplate,
} from './template-sections.js';
import { RETRY_POLICIES } from './values/enums.js';
import type { IntOrString } from './values/scalars.js';
import type { Volume } from './volume.js';

export * from './common-records.js';
export * from './container-records.js';
export * from './template-calls.js';
export * from './template-runtime.js';
export * from './template-sections.js';

/** The container field set (spec 002): Kubernetes' own container record, passed to the pod. */
export const CONTAINER_NOTE = `the container field set, ${KUBE} (without command, the image's ENTRYPOINT and CMD are read from its registry or the controller's plugflow-images ConfigMap)`;

/**
 * A Dynamic Resource Allocation claim of a pod (Kubernetes' PodResourceClaim): its name, which
 * containers name in `resources.claims`, and exactly one source.
 */
export interface PodResourceClaim {
  name: string;
  /** An existing ResourceClaim in the workflow's namespace, shared by every pod naming it. */
  resourceClaimName?: string;
  /** A ResourceClaimTemplate in the workflow's namespace: each pod gets its own claim, deleted with it. */
  resourceClaimTemplateName?: string;
}

export const EXECUTOR_CONFIG_RECORD = record('ExecutorConfig', {
  serviceAccountName: field<string>(
    str(),
    ok(
      "the service account of the workflow's agent pod (plugin and http steps); step pods need none, since plugflow's containers there make no API calls",
    ),
  ),
});
export interface ExecutorConfig extends RecordOf<typeof EXECUTOR_CONFIG_RECORD.fields> {}

/** The spec says "a string"; these are the values the engine knows (see values/enums.ts). */
export type RetryPolicy = string;

export const BACKOFF_RECORD = record('Backoff', {
  /** Seconds by default, or forms like `2m`, `1h`. */
  duration: field<string>(str({ description: 'Seconds by default, or forms like 2m, 1h.' })),
  factor: field<IntOrString>(intOrString()),
  maxDuration: field<string>(str()),
  /** The longest one wait may grow to by the factor (seconds by default, or `2m`, `1h`). */
  cap: field<string>(
    str({ description: 'The longest one wait may grow to by the factor.' }),
    ok('the longest one wait may grow to by the factor'),
  ),
});
export interface Backoff extends RecordOf<typeof BACKOFF_RECORD.fields> {}

export const RETRY_AFFINITY_RECORD = record('RetryAffinity', {
  /** Empty-object shape: keeps retried steps off the same host. */
  nodeAntiAffinity: field<Record<string, never>>(
    emptyObject(),
    ok("a retry's pod is kept off the Kubernetes nodes its failed attempts ran on (kubernetes.io/hostname NotIn)"),
  ),
});
export interface RetryAffinity extends RecordOf<typeof RETRY_AFFINITY_RECORD.fields> {}

export const RETRY_STRATEGY_RECORD = record('RetryStrategy', {
  limit: field<IntOrString>(intOrString()),
  retryPolicy: field<RetryPolicy>(oneOfStrings(RETRY_POLICIES)),
  backoff: ref<Backoff>(BACKOFF_RECORD),
  /** When it evaluates to false the node is not retried. */
  expression: field<string>(str()),
  affinity: ref<RetryAffinity>(RETRY_AFFINITY_RECORD),
});
export interface RetryStrategy extends RecordOf<typeof RETRY_STRATEGY_RECORD.fields> {}

/** The plugin section: an object with exactly one key, the plugin's name (see values/plugin.ts). */
export type Plugin = Record<string, unknown>;

/** The ten template kinds; a template has exactly one of these sections. */
export const TEMPLATE_KINDS = [
  'container',
  'script',
  'dag',
  'steps',
  'suspend',
  'resource',
  'http',
  'plugin',
  'containerSet',
  'data',
] as const;

export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

/** CEL rule: exactly one kind section. */
const exactlyOneKind = {
  rule: `${TEMPLATE_KINDS.map((k) => `(has(self.${k}) ? 1 : 0)`).join(' + ')} == 1`,
  message: `must have exactly one of ${TEMPLATE_KINDS.join(', ')}`,
};

/**
 * The Template record. Unknown fields are pruned by the CRD: the spec lists all of its fields.
 * The big open records (the container field set, volumes, affinity, artifacts, security contexts,
 * metrics, locks) are kept as opaque objects in the CRD: the API server keeps them unchanged and
 * the engine's validator checks them with better messages than a schema can give.
 */
export const TEMPLATE_RECORD = record(
  'Template',
  {
    /** Template name; required (the CRD and the validator enforce it). */
    name: field<string>(fieldName('Template name, unique within the workflow.')).required(),
    container: ref<Container>(CONTAINER_RECORD, 'one', CONTAINER_NOTE, {
      crd: 'open',
      extra: { description: 'The container field set.' },
    }),
    script: field<ScriptTemplate>(
      obj({ source: str() }, { description: 'The container field set plus source.', required: ['source'], open: true }),
      rec(SCRIPT_TEMPLATE_RECORD.name),
    ),
    steps: ref<ParallelSteps[]>(WORKFLOW_STEP_RECORD, 'groups', undefined, {
      extra: { description: 'Groups of steps; the groups run in order, the steps of a group in parallel.' },
    }),
    dag: ref<DAGTemplate>(DAG_TEMPLATE_RECORD),
    suspend: ref<SuspendTemplate>(SUSPEND_TEMPLATE_RECORD),
    http: ref<HTTP>(HTTP_RECORD),
    plugin: field<Plugin>(
      openObject({
        description: 'The plugin section: exactly one key, the plugin name, whose value is its configuration.',
        minProperties: 1,
        maxProperties: 1,
      }),
      ok('the executor plugin named by its only key'),
    ),
    resource: ref<ResourceTemplate>(
      RESOURCE_TEMPLATE_RECORD,
      'one',
      "done by the controller with the rights of the step's service account (template, else spec.serviceAccountName, else default), impersonated; no pod, except one that fetches a manifestFrom.artifact",
    ),
    containerSet: ref<ContainerSetTemplate>(
      CONTAINER_SET_TEMPLATE_RECORD,
      'one',
      'one pod; every container starts at once and runs its command when the containers it depends on succeeded; outputs from the container named main',
    ),
    data: ref<Data>(
      DATA_RECORD,
      'one',
      'a pod of the plugflow image lists the objects and applies the transformation; outputs.result is the JSON value',
    ),
    inputs: ref<Inputs>(INPUTS_RECORD),
    outputs: ref<Outputs>(OUTPUTS_RECORD),
    activeDeadlineSeconds: field<IntOrString>(intOrString()),
    /** Total node time from start, Pending included; not applied to steps/DAG templates. */
    timeout: field<string>(str()),
    retryStrategy: ref<RetryStrategy>(RETRY_STRATEGY_RECORD),
    parallelism: field<number>(int64()),
    failFast: field<boolean>(bool()),
    affinity: field<Affinity>(openObject(), ok(KUBE)),
    nodeSelector: field<StringMap>(stringMap(), ok(KUBE)),
    tolerations: field<Toleration[]>(arr(openObject()), ok(KUBE)),
    securityContext: field<PodSecurityContext>(openObject(), ok(KUBE)),
    schedulerName: field<string>(str(), ok(KUBE)),
    priorityClassName: field<string>(str(), ok(KUBE)),
    hostAliases: field<HostAlias[]>(arr(openObject()), ok(KUBE)),
    volumes: field<Volume[]>(arr(openObject()), ok(KUBE)),
    initContainers: ref<UserContainer[]>(USER_CONTAINER_RECORD, 'list', undefined, { crd: 'open' }),
    sidecars: ref<UserContainer[]>(USER_CONTAINER_RECORD, 'list', undefined, { crd: 'open' }),
    serviceAccountName: field<string>(str()),
    /** When false, `executor.serviceAccountName` must be given. */
    automountServiceAccountToken: field<boolean>(bool()),
    executor: field<ExecutorConfig>(
      EXECUTOR_CONFIG_RECORD.schema,
      no(
        "a template-level executor is not supported: plugflow's containers in a step pod make no Kubernetes API calls; the agent pod (plugin and http steps) runs as spec.executor.serviceAccountName or the controller's agent service account",
      ),
    ),
    metadata: ref<Metadata>(METADATA_RECORD, 'one', 'labels and annotations of the step pod'),
    podSpecPatch: field<string>(str(), ok('merged into the step pod')),
    /** The step pod's pod-level resources (spec.resources); replaces the workflow's. */
    podResources: field<ResourceRequirements>(
      openObject({ description: "Kubernetes' ResourceRequirements: the step pod's pod-level resources." }),
      ok(`${POD_RESOURCES_NOTE}; replaces spec.podResources`),
    ),
    /** The step pod's DRA claims (spec.resourceClaims); a non-empty list replaces the workflow's. */
    resourceClaims: field<PodResourceClaim[]>(
      arr(openObject(), { description: "Kubernetes' PodResourceClaims: the step pod's DRA claims." }),
      ok(`${RESOURCE_CLAIMS_NOTE}; replaces spec.resourceClaims as a whole (a template needing both names both)`),
    ),
    /**
     * Metadata of the template itself: `workflows.plugflow.io/display-name` (rendered with the
     * inputs) is its node's displayName; other keys have no effect (display-name.ts).
     */
    annotations: field<StringMap>(
      stringMap({ description: 'Metadata of the template; workflows.plugflow.io/display-name names its node.' }),
      ok(
        "workflows.plugflow.io/display-name, rendered with the inputs when the node starts, is its displayName (2 to 63 letters, digits, - and ., starting and ending with a letter or digit); other workflows.plugflow.io/ keys, and the peer's workflows.argoproj.io/display-name, are refused; any other key is kept on the template as metadata only (pod annotations are metadata.annotations)",
      ),
    ),
    priority: field<number>(
      int32(),
      no(
        "the peer sets it as the step pod's spec.priority, which Kubernetes' Priority admission refuses unless it equals the priorityClassName's value; use priorityClassName",
      ),
    ),
    daemon: field<boolean>(
      bool(),
      ok(
        'container and script templates: done once the main container is ready ({{steps.X.ip}} holds its pod IP), stopped when the steps or DAG that started it end',
      ),
    ),
    memoize: ref<Memoize>(
      MEMOIZE_RECORD,
      'one',
      'a fresh cache entry for the key makes the node Succeeded with its outputs, without running',
      {
        crd: 'open',
      },
    ),
    metrics: ref<Metrics>(
      METRICS_RECORD,
      'one',
      "emitted on the controller's /metrics endpoint when a node of the template ends (realtime gauges while it runs)",
      { crd: 'open' },
    ),
    synchronization: ref<Synchronization>(
      SYNCHRONIZATION_RECORD,
      'one',
      'the node stays Pending until it holds every lock named, and holds them until it ends',
      { crd: 'open' },
    ),
    archiveLocation: ref<ArtifactLocation>(ARCHIVE_LOCATION_RECORD, 'one', "where this template's output artifacts are stored", {
      crd: 'open',
    }),
  },
  { 'x-kubernetes-validations': [exactlyOneKind] },
);
export interface Template extends RecordOf<typeof TEMPLATE_RECORD.fields> {}

/** A template written in place inside a step or task; its name is optional. */
export type InlineTemplate = Omit<Template, 'name'> & { name?: string };
