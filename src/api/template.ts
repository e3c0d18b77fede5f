/**
 * The Template record and everything inside it (spec document 001, "Template" and "DAG, data,
 * resource, retry, HTTP"). A template has exactly one kind section (container, script, dag,
 * steps, suspend, resource, http, plugin, containerSet, data); the validator checks that.
 */
import type {
  ConfigMapKeySelector,
  Container,
  ContainerNode,
  PodSecurityContext,
  ResourceRequirements,
  SecretKeySelector,
  StringMap,
  UserContainer,
  VolumeMount,
} from './container.js';
import type { Affinity, HostAlias, Toleration } from './scheduling.js';
import type { Volume } from './volume.js';
import type { Artifact, ArtifactLocation, ArtifactPaths } from './artifact.js';
import type { Arguments, Inputs, Outputs } from './parameter.js';
import type { IntOrString } from './values/scalars.js';
import type { Item, LifecycleHooks, Sequence, TemplateRef } from './workflow.js';

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

/** Labels and annotations added to the pod of a template. */
export interface Metadata {
  annotations?: StringMap;
  labels?: StringMap;
}

export interface ExecutorConfig {
  serviceAccountName?: string;
}

/** Whether a step's failure or error lets the caller continue. */
export interface ContinueOn {
  error?: boolean;
  failed?: boolean;
}

export interface SuspendTemplate {
  /** Seconds by default, or forms like `2m`, `6h`, `1d`. See values/duration.ts. */
  duration?: string;
}

export interface Mutex {
  name: string;
  namespace?: string;
}

/** Fields not shown by the spec; a semaphore is a limit read from a ConfigMap key. */
export interface SemaphoreRef {
  configMapKeyRef?: ConfigMapKeySelector;
  namespace?: string;
}

/**
 * Locks a workflow (spec.synchronization) or a template holds while it runs. `mutexes` and
 * `semaphores` are the peer's later list forms; every lock named is taken at once or not at all.
 */
export interface Synchronization {
  mutex?: Mutex;
  semaphore?: SemaphoreRef;
  mutexes?: Mutex[];
  semaphores?: SemaphoreRef[];
}

export interface Cache {
  /** The peer's ConfigMapKeySelector shape; `key` is not used (entries are keyed by `memoize.key`). */
  configMap: { name: string; key?: string };
}

export interface Memoize {
  cache: Cache;
  key: string;
  /** For example `180s`, `24h`; older entries are ignored. */
  maxAge?: string;
}

export interface ScriptTemplate extends Container {
  /** The script code. */
  source: string;
}

export interface ContainerSetRetryStrategy {
  /** Between retries; units ns, us, ms, s, m, h. */
  duration?: string;
  retries: IntOrString;
}

export interface ContainerSetTemplate {
  containers: ContainerNode[];
  retryStrategy?: ContainerSetRetryStrategy;
  volumeMounts?: VolumeMount[];
}

export interface DAGTask {
  name: string;
  arguments?: Arguments;
  continueOn?: ContinueOn;
  dependencies?: string[];
  depends?: string;
  hooks?: LifecycleHooks;
  /** A template written in place; the peer lets it go without a name, plugflow types it as a full Template. */
  inline?: Template;
  /** Deprecated: use the `exit` hook. */
  onExit?: string;
  template?: string;
  templateRef?: TemplateRef;
  when?: string;
  withItems?: Item[];
  /** A JSON list. */
  withParam?: string;
  withSequence?: Sequence;
}

export interface DAGTemplate {
  /** Default true; when false all branches run to completion. */
  failFast?: boolean;
  /** Names of target tasks (space separated). */
  target?: string;
  tasks: DAGTask[];
}

/** One step of a steps template (fields not shown by the spec; those of DAGTask that apply). */
export interface WorkflowStep {
  name?: string;
  arguments?: Arguments;
  continueOn?: ContinueOn;
  hooks?: LifecycleHooks;
  /** A template written in place; the peer lets it go without a name, plugflow types it as a full Template. */
  inline?: Template;
  onExit?: string;
  template?: string;
  templateRef?: TemplateRef;
  when?: string;
  withItems?: Item[];
  withParam?: string;
  withSequence?: Sequence;
}

/** Steps that run in parallel; `steps` is a list of these groups, run one after another. */
export type ParallelSteps = WorkflowStep[];

export interface TransformationStep {
  expression: string;
}

export type Transformation = TransformationStep[];

export interface DataSource {
  artifactPaths?: ArtifactPaths;
}

export interface Data {
  source: DataSource;
  transformation: Transformation;
}

export type ResourceAction = 'get' | 'create' | 'apply' | 'delete' | 'replace' | 'patch';
export type MergeStrategy = 'strategic' | 'merge' | 'json';

export interface ManifestFrom {
  artifact: Artifact;
}

export interface ResourceTemplate {
  action: ResourceAction;
  failureCondition?: string;
  flags?: string[];
  manifest?: string;
  manifestFrom?: ManifestFrom;
  /** Default `strategic`. */
  mergeStrategy?: MergeStrategy;
  setOwnerReference?: boolean;
  successCondition?: string;
}

/** The spec says "a string"; these are the values the engine knows (see values/enums.ts). */
export type RetryPolicy = string;

export interface Backoff {
  /** Seconds by default, or forms like `2m`, `1h`. */
  duration?: string;
  factor?: IntOrString;
  maxDuration?: string;
  /** The longest one wait may grow to by the factor (seconds by default, or `2m`, `1h`). */
  cap?: string;
}

export interface RetryAffinity {
  /** Empty-object shape: keeps retried steps off the same host. */
  nodeAntiAffinity?: Record<string, never>;
}

export interface RetryStrategy {
  affinity?: RetryAffinity;
  backoff?: Backoff;
  /** When it evaluates to false the node is not retried. */
  expression?: string;
  limit?: IntOrString;
  retryPolicy?: RetryPolicy;
}

export interface HTTPHeader {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: SecretKeySelector };
}

export type HTTPHeaders = HTTPHeader[];

export interface HTTPBodySource {
  /** The bytes of the body, base64-encoded in JSON (how a list of bytes travels). */
  bytes?: string;
}

export interface HTTP {
  body?: string;
  bodyFrom?: HTTPBodySource;
  headers?: HTTPHeaders;
  insecureSkipVerify?: boolean;
  /** Default GET. */
  method?: string;
  /** An expression; true means success. */
  successCondition?: string;
  /** Default 30. */
  timeoutSeconds?: number;
  url: string;
}

export interface MetricLabel {
  key: string;
  value: string;
}

export interface VendorP {
  name: string;
  help: string;
  counter?: { value: string };
  gauge?: { realtime?: boolean; value: string };
  histogram?: { buckets: number[]; value: string };
  labels?: MetricLabel[];
  /** Condition for emitting. */
  when?: string;
}

export interface Metrics {
  vendorP: VendorP[];
}

/** The plugin section: an object with exactly one key, the plugin's name (see values/plugin.ts). */
export type Plugin = Record<string, unknown>;

export interface Template {
  /** Template name; required (the CRD and the validator enforce it). */
  name: string;
  activeDeadlineSeconds?: IntOrString;
  affinity?: Affinity;
  /**
   * Metadata of the template itself: `workflows.plugflow.io/display-name` (rendered with the
   * inputs) is its node's displayName; other keys have no effect (display-name.ts).
   */
  annotations?: StringMap;
  archiveLocation?: ArtifactLocation;
  /** When false, `executor.serviceAccountName` must be given. */
  automountServiceAccountToken?: boolean;
  container?: Container;
  containerSet?: ContainerSetTemplate;
  daemon?: boolean;
  dag?: DAGTemplate;
  data?: Data;
  executor?: ExecutorConfig;
  failFast?: boolean;
  hostAliases?: HostAlias[];
  http?: HTTP;
  initContainers?: UserContainer[];
  inputs?: Inputs;
  memoize?: Memoize;
  metadata?: Metadata;
  metrics?: Metrics;
  nodeSelector?: StringMap;
  outputs?: Outputs;
  parallelism?: number;
  plugin?: Plugin;
  podSpecPatch?: string;
  /** The step pod's pod-level resources (spec.resources); replaces the workflow's. */
  podResources?: ResourceRequirements;
  priority?: number;
  priorityClassName?: string;
  resource?: ResourceTemplate;
  /** The step pod's DRA claims (spec.resourceClaims); a non-empty list replaces the workflow's. */
  resourceClaims?: PodResourceClaim[];
  retryStrategy?: RetryStrategy;
  schedulerName?: string;
  script?: ScriptTemplate;
  securityContext?: PodSecurityContext;
  serviceAccountName?: string;
  sidecars?: UserContainer[];
  steps?: ParallelSteps[];
  suspend?: SuspendTemplate;
  synchronization?: Synchronization;
  /** Total node time from start, Pending included; not applied to steps/DAG templates. */
  timeout?: string;
  tolerations?: Toleration[];
  volumes?: Volume[];
}

/** A template written in place inside a step or task; its name is optional. */
export type InlineTemplate = Omit<Template, 'name'> & { name?: string };

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
