/**
 * Workflow, WorkflowTemplate and ClusterWorkflowTemplate resources and the small records they
 * reference (spec document 001; fields the spec does not show follow the peer system's shapes).
 */
import type { LabelSelector, LocalObjectReference, ObjectMeta, PodSecurityContext, ResourceRequirements, StringMap } from './container.js';
import type { Affinity, HostAlias, Toleration } from './scheduling.js';
import type { PersistentVolumeClaimTemplate, Volume } from './volume.js';
import type { Arguments } from './parameter.js';
import type { ArtifactGC } from './artifact.js';
import type { ExecutorConfig, Metadata, Metrics, PodResourceClaim, RetryStrategy, Synchronization, Template } from './template.js';
import type { WorkflowStatus } from './workflow-status.js';
import type { WorkflowExecutorPlugin } from './plugin.js';
import type { IntOrString } from './values/scalars.js';

/** A `withItems` element: any JSON value. */
export type Item = unknown;

/** `withSequence`: numbers from start to end (or count of them), each formatted by `format`. */
export interface Sequence {
  count?: IntOrString;
  start?: IntOrString;
  end?: IntOrString;
  /** printf-style format, e.g. `%02d`. */
  format?: string;
}

/** Reference to a template inside a WorkflowTemplate or ClusterWorkflowTemplate. */
export interface TemplateRef {
  /** The referred resource is a ClusterWorkflowTemplate. */
  clusterScope?: boolean;
  /** Resource name. */
  name: string;
  /** Template name within the resource. */
  template: string;
}

/** A hook run on an event of a step, task or workflow (`exit`, or an expression). */
export interface LifecycleHook {
  template?: string;
  templateRef?: TemplateRef;
  arguments?: Arguments;
  /** Runs the hook when the expression becomes true. */
  expression?: string;
}

/** Hooks by name; the name `exit` runs when the step/workflow ends. */
export type LifecycleHooks = Record<string, LifecycleHook>;

/** A workflow built from a (Cluster)WorkflowTemplate. */
export interface WorkflowTemplateRef {
  name: string;
  clusterScope?: boolean;
}

export interface TTLStrategy {
  secondsAfterCompletion?: number;
  secondsAfterSuccess?: number;
  secondsAfterFailure?: number;
}

export interface PodGC {
  strategy?: string;
  labelSelector?: LabelSelector;
  deleteDelayDuration?: string;
}

export interface WorkflowSpec {
  templates?: Template[];
  entrypoint?: string;
  arguments?: Arguments;
  workflowTemplateRef?: WorkflowTemplateRef;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  executor?: ExecutorConfig;
  /**
   * The workflow's own executor plugins (workflow-level plugins; controller gate
   * WORKFLOW_LEVEL_EXECUTOR_PLUGINS). When non-empty they replace the discovered ConfigMap
   * plugins in this workflow's agent pod.
   */
  executorPlugins?: WorkflowExecutorPlugin[];
  volumes?: Volume[];
  volumeClaimTemplates?: PersistentVolumeClaimTemplate[];
  /** When the claims of volumeClaimTemplates are deleted: OnWorkflowSuccess (default) or OnWorkflowCompletion. */
  volumeClaimGC?: { strategy?: string };
  /** Kubernetes' PodDisruptionBudgetSpec without `selector` (plugflow selects the workflow's pods). */
  podDisruptionBudget?: { minAvailable?: number | string; maxUnavailable?: number | string };
  parallelism?: number;
  /** Set true to suspend the whole workflow; cleared on resume. */
  suspend?: boolean;
  nodeSelector?: StringMap;
  affinity?: Affinity;
  tolerations?: Toleration[];
  imagePullSecrets?: LocalObjectReference[];
  hostNetwork?: boolean;
  dnsPolicy?: string;
  /** Kubernetes' PodDNSConfig (nameservers, searches, options), given to every step pod. */
  dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: Array<{ name?: string; value?: string }> };
  onExit?: string;
  hooks?: LifecycleHooks;
  ttlStrategy?: TTLStrategy;
  activeDeadlineSeconds?: number;
  priority?: number;
  schedulerName?: string;
  podGC?: PodGC;
  podPriorityClassName?: string;
  hostAliases?: HostAlias[];
  securityContext?: PodSecurityContext;
  podSpecPatch?: string;
  /** Pod-level resources (pod spec.resources) of every step pod whose template sets none. */
  podResources?: ResourceRequirements;
  /** DRA claims (pod spec.resourceClaims) of every step pod whose template sets none. */
  resourceClaims?: PodResourceClaim[];
  metrics?: Metrics;
  /** `Stop` or `Terminate`: asks the controller to end the workflow. */
  shutdown?: string;
  synchronization?: Synchronization;
  retryStrategy?: RetryStrategy;
  podMetadata?: Metadata;
  templateDefaults?: Partial<Template>;
  archiveLogs?: boolean;
  /** When stored output artifacts are deleted (the peer's field; refused until implemented). */
  artifactGC?: ArtifactGC;
  /** Which artifact repository (a ConfigMap key) output artifacts go to; see src/artifacts/repository.ts. */
  artifactRepositoryRef?: { configMap?: string; key?: string };
  /** Labels and annotations the workflow gives itself; labelsFrom values are expressions. */
  workflowMetadata?: { labels?: StringMap; annotations?: StringMap; labelsFrom?: Record<string, { expression: string }> };
}

export interface Workflow {
  apiVersion?: string;
  kind?: 'Workflow';
  metadata: ObjectMeta;
  spec: WorkflowSpec;
  status?: WorkflowStatus;
}

export interface WorkflowTemplate {
  apiVersion?: string;
  kind?: 'WorkflowTemplate';
  metadata: ObjectMeta;
  spec: WorkflowSpec;
}

export interface ClusterWorkflowTemplate {
  apiVersion?: string;
  kind?: 'ClusterWorkflowTemplate';
  metadata: ObjectMeta;
  spec: WorkflowSpec;
}
