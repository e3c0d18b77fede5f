/**
 * THE list of workflow fields plugflow implements and the ones it refuses (issue 18 §5: no field
 * is ever silently ignored). Every field of every record a workflow can hold (spec documents 001
 * and 002, plus the peer's WorkflowSpec fields) is here, either `supported` or `refused` with the
 * reason users see:
 *
 *   - the engine's validator (src/engine/validate-fields.ts) walks a workflow along these records
 *     and refuses every refused field present, naming its full path — on submit (CLI, REST
 *     server) and before the controller runs a workflow, for referenced WorkflowTemplates too;
 *   - a unit test (supported-fields.test.ts) walks every field of the CRD schemas (src/api/crd)
 *     and fails when one is not classified here, or when a field classified here would be pruned
 *     by the API server (then the validator could never see it);
 *   - the table in src/engine/README.md is generated from this list (hack/gen-fields-doc.ts) and
 *     a test checks that it matches.
 *
 * A supported field with `record` is walked further (its own fields are classified there); one
 * without is a leaf, or a Kubernetes record passed to the pod unchanged. A field that is in
 * neither list is refused as unknown (a typo, or a field of a newer peer version).
 *
 * Records are null-prototype maps so that user keys such as `constructor` never match.
 */

import { no, ok, rec, type FieldRule } from './field-rules.js';
import { ARTIFACT_RECORD_NAMES, ARTIFACT_RECORDS } from './supported-fields-artifacts.js';
import { KIND_RECORDS } from './supported-fields-kinds.js';
import { PARAMETER_RECORDS } from './supported-fields-parameters.js';
import { EXECUTOR_PLUGINS_FIELD, PLUGIN_RECORD_NAMES, PLUGIN_RECORDS } from './supported-fields-plugins.js';
import { RUNTIME_RECORDS } from './supported-fields-runtime.js';

export type { FieldRule, FieldShape } from './field-rules.js';
const KUBE = 'passed to Kubernetes unchanged';

/** Pod-level resources (Kubernetes' pod.spec.resources), workflow and template level. */
const POD_RESOURCES_NOTE =
  "the step pod's spec.resources: one budget of requests and limits shared by all its containers, plugflow's init and wait included; cpu, memory and hugepages-* only, no claims";
/** Dynamic Resource Allocation claims (Kubernetes' pod.spec.resourceClaims). */
const RESOURCE_CLAIMS_NOTE =
  "the step pod's spec.resourceClaims: each a name and one of resourceClaimName, resourceClaimTemplateName; a container gets a claim it names in its resources.claims";

/** The container field set (spec 002): Kubernetes' own container record, passed to the pod. */
const CONTAINER_NOTE = `the container field set, ${KUBE} (without command, the image's ENTRYPOINT and CMD are read from its registry or the controller's plugflow-images ConfigMap)`;

/** The container field set (spec document 002, "Container field set"). */
export const CONTAINER_FIELDS = [
  'args',
  'command',
  'env',
  'envFrom',
  'image',
  'imagePullPolicy',
  'lifecycle',
  'livenessProbe',
  'name',
  'ports',
  'readinessProbe',
  'resources',
  'securityContext',
  'startupProbe',
  'stdin',
  'stdinOnce',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'tty',
  'volumeDevices',
  'volumeMounts',
  'workingDir',
] as const;

/** Every record a workflow can hold, by the spec's names (plus the contexts a Parameter is in). */
export const RECORD_NAMES = [
  'WorkflowSpec',
  'WorkflowTemplateRef',
  'PodGC',
  'TTLStrategy',
  'VolumeClaimGC',
  'WorkflowMetadata',
  'PodDisruptionBudget',
  'ExecutorConfig',
  'Metadata',
  'Template',
  'Container',
  'ScriptTemplate',
  'UserContainer',
  'ContainerSetTemplate',
  'ContainerNode',
  'ContainerSetRetryStrategy',
  'SuspendTemplate',
  'DAGTemplate',
  'WorkflowStep',
  'DAGTask',
  'ContinueOn',
  'Sequence',
  'TemplateRef',
  'LifecycleHook',
  'WorkflowArguments',
  'CallArguments',
  'Inputs',
  'Outputs',
  'WorkflowArgumentParameter',
  'CallArgumentParameter',
  'ArgumentValueFrom',
  'InputParameter',
  'InputValueFrom',
  'ParameterConfigMapKeyRef',
  'OutputParameter',
  'OutputValueFrom',
  'RetryStrategy',
  'Backoff',
  'RetryAffinity',
  'ResourceTemplate',
  'ManifestFrom',
  'ManifestArtifact',
  'HTTP',
  'HTTPHeader',
  'HTTPHeaderSource',
  'HTTPBodySource',
  'SecretKeySelector',
  ...ARTIFACT_RECORD_NAMES,
  'Memoize',
  'MemoizeCache',
  'MemoizeCacheConfigMap',
  'Synchronization',
  'Mutex',
  'SemaphoreRef',
  'SemaphoreConfigMapKeyRef',
  'Metrics',
  'VendorP',
  'MetricCounter',
  'MetricGauge',
  'MetricHistogram',
  'MetricLabel',
  ...PLUGIN_RECORD_NAMES,
] as const;

export type RecordName = (typeof RECORD_NAMES)[number];

const RECORDS: Record<RecordName, Record<string, FieldRule>> = {
  WorkflowSpec: {
    templates: rec('Template', 'list'),
    entrypoint: ok(),
    arguments: rec('WorkflowArguments'),
    workflowTemplateRef: rec('WorkflowTemplateRef'),
    serviceAccountName: ok('service account of the step pods'),
    automountServiceAccountToken: ok(),
    executor: rec('ExecutorConfig'),
    executorPlugins: EXECUTOR_PLUGINS_FIELD,
    volumes: ok(KUBE),
    volumeClaimTemplates: ok('one PersistentVolumeClaim <workflow>-<name> per entry, made before the first pod, mounted by name'),
    volumeClaimGC: rec('VolumeClaimGC', 'one', 'when the claims are deleted'),
    parallelism: ok(),
    suspend: ok(),
    shutdown: ok(),
    nodeSelector: ok(KUBE),
    affinity: ok(KUBE),
    tolerations: ok(KUBE),
    imagePullSecrets: ok(KUBE),
    hostNetwork: ok(KUBE),
    dnsPolicy: ok(KUBE),
    dnsConfig: ok(`of every step pod, ${KUBE}`),
    hostAliases: ok(KUBE),
    securityContext: ok(KUBE),
    schedulerName: ok(KUBE),
    podPriorityClassName: ok(KUBE),
    podPriority: no('deprecated by the peer; use podPriorityClassName'),
    podSpecPatch: ok('merged into every step pod'),
    podMetadata: rec('Metadata', 'one', 'labels and annotations of every step pod'),
    podResources: ok(POD_RESOURCES_NOTE),
    resourceClaims: ok(RESOURCE_CLAIMS_NOTE),
    onExit: ok(),
    hooks: rec('LifecycleHook', 'map', 'exit, and conditional hooks with an expression'),
    activeDeadlineSeconds: ok(),
    priority: ok('orders the waiters of a synchronization lock: higher first, then older first'),
    podGC: rec('PodGC', 'one', 'step pods deleted per strategy, label selector and delay'),
    ttlStrategy: rec('TTLStrategy', 'one', 'the finished workflow is deleted after that many seconds'),
    podDisruptionBudget: rec('PodDisruptionBudget', 'one', "a PodDisruptionBudget over the workflow's step pods while it runs"),
    metrics: rec('Metrics', 'one', "emitted on the controller's /metrics endpoint when the workflow ends (realtime gauges while it runs)"),
    synchronization: rec(
      'Synchronization',
      'one',
      'the workflow stays Pending until it holds every lock named, and holds them until it ends',
    ),
    retryStrategy: rec('RetryStrategy', 'one', 'the retryStrategy of every template without one'),
    templateDefaults: rec('Template', 'one', 'merged under every template, its own fields winning'),
    archiveLogs: ok("the main container's stdout and stderr saved as the output artifact main-logs of every step pod"),
    artifactRepositoryRef: rec('ArtifactRepositoryRef', 'one', 'the ConfigMap key output artifacts are stored under'),
    artifactGC: rec('ArtifactGC', 'one', "when stored output artifacts are deleted (a pod with the Secrets' credentials does it)"),
    workflowMetadata: rec('WorkflowMetadata', 'one', 'labels and annotations set on the workflow when it runs'),
  },
  WorkflowTemplateRef: { name: ok(), clusterScope: ok() },
  PodGC: { strategy: ok(), labelSelector: ok('matchLabels and matchExpressions, as Kubernetes'), deleteDelayDuration: ok() },
  TTLStrategy: { secondsAfterCompletion: ok(), secondsAfterSuccess: ok(), secondsAfterFailure: ok() },
  VolumeClaimGC: { strategy: ok() },
  WorkflowMetadata: {
    labels: ok(),
    annotations: ok(),
    labelsFrom: ok('label name → { expression }, evaluated over the workflow variables'),
  },
  PodDisruptionBudget: {
    minAvailable: ok(KUBE),
    maxUnavailable: ok(KUBE),
    unhealthyPodEvictionPolicy: ok(KUBE),
    selector: no("plugflow selects the workflow's step pods itself"),
  },
  ExecutorConfig: {
    serviceAccountName: ok(
      "the service account of the workflow's agent pod (plugin and http steps); step pods need none, since plugflow's containers there make no API calls",
    ),
  },
  Metadata: { labels: ok(), annotations: ok() },
  Template: {
    name: ok(),
    container: rec('Container', 'one', CONTAINER_NOTE),
    script: rec('ScriptTemplate'),
    steps: rec('WorkflowStep', 'groups'),
    dag: rec('DAGTemplate'),
    suspend: rec('SuspendTemplate'),
    http: rec('HTTP'),
    plugin: ok('the executor plugin named by its only key'),
    resource: rec(
      'ResourceTemplate',
      'one',
      "done by the controller with the rights of the step's service account (template, else spec.serviceAccountName, else default), impersonated; no pod, except one that fetches a manifestFrom.artifact",
    ),
    containerSet: rec(
      'ContainerSetTemplate',
      'one',
      'one pod; every container starts at once and runs its command when the containers it depends on succeeded; outputs from the container named main',
    ),
    data: rec(
      'Data',
      'one',
      'a pod of the plugflow image lists the objects and applies the transformation; outputs.result is the JSON value',
    ),
    inputs: rec('Inputs'),
    outputs: rec('Outputs'),
    activeDeadlineSeconds: ok(),
    timeout: ok(),
    retryStrategy: rec('RetryStrategy'),
    parallelism: ok(),
    failFast: ok(),
    affinity: ok(KUBE),
    nodeSelector: ok(KUBE),
    tolerations: ok(KUBE),
    securityContext: ok(KUBE),
    schedulerName: ok(KUBE),
    priorityClassName: ok(KUBE),
    hostAliases: ok(KUBE),
    volumes: ok(KUBE),
    initContainers: rec('UserContainer', 'list'),
    sidecars: rec('UserContainer', 'list'),
    serviceAccountName: ok(),
    automountServiceAccountToken: ok(),
    executor: no(
      "a template-level executor is not supported: plugflow's containers in a step pod make no Kubernetes API calls; the agent pod (plugin and http steps) runs as spec.executor.serviceAccountName or the controller's agent service account",
    ),
    metadata: rec('Metadata', 'one', 'labels and annotations of the step pod'),
    podSpecPatch: ok('merged into the step pod'),
    podResources: ok(`${POD_RESOURCES_NOTE}; replaces spec.podResources`),
    resourceClaims: ok(`${RESOURCE_CLAIMS_NOTE}; replaces spec.resourceClaims as a whole (a template needing both names both)`),
    annotations: ok(
      "workflows.plugflow.io/display-name, rendered with the inputs when the node starts, is its displayName (2 to 63 letters, digits, - and ., starting and ending with a letter or digit); other workflows.plugflow.io/ keys, and the peer's workflows.argoproj.io/display-name, are refused; any other key is kept on the template as metadata only (pod annotations are metadata.annotations)",
    ),
    priority: no(
      "the peer sets it as the step pod's spec.priority, which Kubernetes' Priority admission refuses unless it equals the priorityClassName's value; use priorityClassName",
    ),
    daemon: ok(
      'container and script templates: done once the main container is ready ({{steps.X.ip}} holds its pod IP), stopped when the steps or DAG that started it end',
    ),
    memoize: rec('Memoize', 'one', 'a fresh cache entry for the key makes the node Succeeded with its outputs, without running'),
    metrics: rec(
      'Metrics',
      'one',
      "emitted on the controller's /metrics endpoint when a node of the template ends (realtime gauges while it runs)",
    ),
    synchronization: rec('Synchronization', 'one', 'the node stays Pending until it holds every lock named, and holds them until it ends'),
    archiveLocation: rec('ArchiveLocation', 'one', "where this template's output artifacts are stored"),
  },
  Container: containerFields(),
  ScriptTemplate: { source: ok(), ...containerFields() },
  UserContainer: {
    mirrorVolumeMounts: ok(),
    ...containerFields(),
  },
  ContainerNode: {
    dependencies: ok('names of containers of the set whose command must succeed first; a container whose dependency failed does not run'),
    ...containerFields(),
  },
  SuspendTemplate: { duration: ok() },
  DAGTemplate: { tasks: rec('DAGTask', 'list'), failFast: ok(), target: ok() },
  WorkflowStep: callFields(),
  DAGTask: { ...callFields(), dependencies: ok(), depends: ok() },
  ContinueOn: { error: ok(), failed: ok() },
  Sequence: { count: ok(), start: ok(), end: ok(), format: ok() },
  TemplateRef: { name: ok(), template: ok(), clusterScope: ok() },
  LifecycleHook: {
    template: ok(),
    templateRef: rec('TemplateRef'),
    arguments: rec('CallArguments'),
    expression: ok('when the hook runs (every hook but exit needs one); see Lifecycle hooks'),
  },
  WorkflowArguments: { parameters: rec('WorkflowArgumentParameter', 'list'), artifacts: rec('ArgumentArtifact', 'list') },
  CallArguments: { parameters: rec('CallArgumentParameter', 'list'), artifacts: rec('ArgumentArtifact', 'list') },
  Inputs: {
    parameters: rec('InputParameter', 'list'),
    artifacts: rec('InputArtifact', 'list', 'fetched before the main container starts'),
  },
  Outputs: {
    parameters: rec('OutputParameter', 'list'),
    artifacts: rec('OutputArtifact', 'list', 'packed and uploaded after the main container ends'),
    result: no('plugflow fills it in when the step runs (its standard output); a template cannot set it'),
    exitCode: no('plugflow fills it in when the step runs; a template cannot set it'),
  },
  ...PARAMETER_RECORDS,
  RetryStrategy: {
    limit: ok(),
    retryPolicy: ok(),
    backoff: rec('Backoff'),
    expression: ok(),
    affinity: rec('RetryAffinity'),
  },
  Backoff: { duration: ok(), factor: ok(), maxDuration: ok(), cap: ok('the longest one wait may grow to by the factor') },
  RetryAffinity: {
    nodeAntiAffinity: ok("a retry's pod is kept off the Kubernetes nodes its failed attempts ran on (kubernetes.io/hostname NotIn)"),
  },
  ...RUNTIME_RECORDS,
  ...ARTIFACT_RECORDS,
  ...KIND_RECORDS,
  ...PLUGIN_RECORDS,
};

function callFields(): Record<string, FieldRule> {
  return {
    name: ok(),
    template: ok(),
    templateRef: rec('TemplateRef'),
    inline: rec('Template', 'one', 'an inline template'),
    arguments: rec('CallArguments'),
    when: ok(),
    withItems: ok(),
    withParam: ok(),
    withSequence: rec('Sequence'),
    continueOn: rec('ContinueOn'),
    hooks: rec('LifecycleHook', 'map', 'exit, and conditional hooks with an expression'),
    onExit: ok(),
  };
}

/** The container field set of spec 002, every field passed to the pod as written. */
function containerFields(): Record<string, FieldRule> {
  const out: Record<string, FieldRule> = {};
  for (const k of CONTAINER_FIELDS) out[k] = ok(KUBE);
  return out;
}

/** The rules of `record`, as a null-prototype map (user keys never reach Object.prototype). */
const FROZEN: Readonly<Record<string, Readonly<Record<string, FieldRule>>>> = Object.freeze(
  Object.fromEntries(
    Object.entries(RECORDS).map(([name, fields]) => [
      name,
      Object.freeze(Object.assign(Object.create(null) as Record<string, FieldRule>, fields)),
    ]),
  ),
);

export function recordRules(record: RecordName): Readonly<Record<string, FieldRule>> {
  return FROZEN[record]!;
}

/** The rule for `field` of `record`, or undefined when the record has no such field. */
export function fieldRule(record: RecordName, field: string): FieldRule | undefined {
  const rules = recordRules(record);
  return Object.hasOwn(rules, field) ? rules[field] : undefined;
}
