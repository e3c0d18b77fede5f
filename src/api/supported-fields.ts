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
import { ARTIFACT_RECORDS } from './supported-fields-artifacts.js';
import { KIND_RECORDS } from './supported-fields-kinds.js';

export type { FieldRule, FieldShape } from './field-rules.js';
const KUBE = 'passed to Kubernetes unchanged';

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
  'ArtifactPaths',
  'Data',
  'DataSource',
  'TransformationStep',
  'InputArtifact',
  'OutputArtifact',
  'ArgumentArtifact',
  'ArchiveLocation',
  'ObjectStoreArtifact',
  'BlobStoreArtifact',
  'GcsArtifact',
  'CreateBucketOptions',
  'HTTPArtifact',
  'HTTPArtifactHeader',
  'HTTPArtifactAuth',
  'BasicAuth',
  'RawArtifact',
  'GitArtifact',
  'ArchiveStrategy',
  'InputArchiveStrategy',
  'InputTarStrategy',
  'TarStrategy',
  'ArtifactRepositoryRef',
  'ArtifactGC',
  'ArtifactGCOfArtifact',
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
  WorkflowArgumentParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('the value must be one of these'),
    valueFrom: rec('ArgumentValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  CallArgumentParameter: {
    name: ok(),
    value: ok(),
    default: no("an argument takes a value; put the default on the template's input parameter"),
    description: ok('documentation only'),
    enum: no("put the allowed values on the template's input parameter"),
    valueFrom: rec('ArgumentValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  ArgumentValueFrom: {
    ...refusedValueSources('arguments take a value, a ConfigMap key (valueFrom.configMapKeyRef) or valueFrom.default'),
    default: ok(),
    configMapKeyRef: rec(
      'ParameterConfigMapKeyRef',
      'one',
      'the value of a key of a ConfigMap labelled workflows.plugflow.io/configmap-type=Parameter',
    ),
  },
  InputValueFrom: {
    ...refusedValueSources("input parameters take the call's argument, a ConfigMap key (valueFrom.configMapKeyRef), value or default"),
    default: ok(),
    configMapKeyRef: rec('ParameterConfigMapKeyRef', 'one', 'used when the call passes no argument of that name'),
  },
  ParameterConfigMapKeyRef: {
    name: ok(),
    key: ok(),
    optional: ok('a missing ConfigMap or key gives "" instead of an error (a default wins over it)'),
  },
  InputParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('the value must be one of these'),
    valueFrom: rec('InputValueFrom'),
    globalName: no('only output parameters are exported with globalName'),
  },
  OutputParameter: {
    name: ok(),
    value: ok(),
    default: ok(),
    description: ok('documentation only'),
    enum: ok('checked when the value is supplied on resume'),
    globalName: ok(),
    valueFrom: rec('OutputValueFrom'),
  },
  OutputValueFrom: {
    path: ok('container and script templates'),
    parameter: ok(),
    expression: ok(),
    supplied: ok('suspend templates'),
    default: ok(),
    jsonPath: ok("resource templates: kubectl's JSONPath over the object, as `kubectl get -o jsonpath` prints it"),
    jqFilter: ok('resource templates: jq over the object (each result on a line, strings raw), in a worker with a time and memory bound'),
    configMapKeyRef: no('output parameters come from the step; a ConfigMap value is read by an input or argument parameter'),
    event: no('only event bindings read it'),
  },
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
  SecretKeySelector: {
    name: ok(),
    key: ok(),
    optional: no('a missing Secret always fails the step; optional Secrets are not implemented yet'),
  },
  Memoize: {
    key: ok('rendered with the inputs; must be a valid ConfigMap key'),
    maxAge: ok('a Go duration (180s, 24h); older entries are ignored; empty: entries never expire'),
    cache: rec('MemoizeCache'),
  },
  MemoizeCache: { configMap: rec('MemoizeCacheConfigMap') },
  MemoizeCacheConfigMap: {
    name: ok("the cache ConfigMap in the workflow's namespace, created with the cache label if missing"),
    key: ok("required by the peer's selector shape and not used by it either: each entry is stored under memoize.key"),
    optional: no('a cache ConfigMap is created when missing; optional has nothing to decide'),
  },
  Synchronization: {
    mutex: rec('Mutex', 'one', 'a lock one holder at a time holds: <namespace>/Mutex/<name>'),
    semaphore: rec('SemaphoreRef', 'one', 'a lock as many holders hold as its ConfigMap key says, read live'),
    mutexes: rec('Mutex', 'list', 'several mutexes, all taken at once'),
    semaphores: rec('SemaphoreRef', 'list', 'several semaphores, all taken at once'),
  },
  Mutex: {
    name: ok('rendered with the workflow variables (and the inputs, at template level)'),
    namespace: ok("only the workflow's own namespace: a lock shared with another namespace would let its workflows stall this one's"),
  },
  SemaphoreRef: {
    configMapKeyRef: rec('SemaphoreConfigMapKeyRef'),
    namespace: ok("only the workflow's own namespace: a lock shared with another namespace would let its workflows stall this one's"),
  },
  SemaphoreConfigMapKeyRef: {
    name: ok("the ConfigMap in the workflow's namespace holding the limit"),
    key: ok('its data key: a whole number of holders; changes are read live (a higher limit admits waiters at once)'),
    optional: no('a semaphore without its ConfigMap has no limit to obey; optional has nothing to decide'),
  },
  Metrics: { vendorP: rec('VendorP', 'list', 'the metrics to emit (the peer calls this list prometheus)') },
  VendorP: {
    name: ok('a Prometheus metric name, served as given'),
    help: ok('required'),
    labels: rec('MetricLabel', 'list'),
    when: ok('rendered and evaluated when the metric would be emitted; false: not emitted'),
    counter: rec('MetricCounter'),
    gauge: rec('MetricGauge'),
    histogram: rec('MetricHistogram'),
  },
  MetricCounter: { value: ok('rendered; the number added') },
  MetricGauge: {
    value: ok('rendered; the number set'),
    realtime: ok('the value follows the running time ({{duration}}), read at each scrape'),
  },
  MetricHistogram: { value: ok('rendered; the number observed'), buckets: ok('upper bounds, increasing') },
  MetricLabel: { key: ok(), value: ok('rendered') },
  ...ARTIFACT_RECORDS,
  ...KIND_RECORDS,
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

function refusedValueSources(why: string): Record<string, FieldRule> {
  const out: Record<string, FieldRule> = {};
  for (const k of ['configMapKeyRef', 'event', 'expression', 'jqFilter', 'jsonPath', 'parameter', 'path', 'supplied'])
    out[k] = no(`this source is not read here: ${why}`);
  return out;
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
