/**
 * Workflow, WorkflowTemplate and ClusterWorkflowTemplate resources and the records of their spec
 * (spec document 001; fields the spec does not show follow the peer system's shapes). Each
 * record is declared once (record-declaration.ts): its type, CRD schema and catalogue rules
 * derive from the declaration below.
 */
import { ARTIFACT_GC_RECORD, ARTIFACT_REPOSITORY_REF_RECORD, type ArtifactGC, type ArtifactRepositoryRef } from './artifact.js';
import type { LabelSelector, LocalObjectReference, ObjectMeta, PodSecurityContext, ResourceRequirements, StringMap } from './container.js';
import { arr, bool, int32, int64, keyedList, oneOfStrings, openObject, str, stringMap } from './crd/schema-builders.js';
import { KUBE, no, ok, POD_RESOURCES_NOTE, rec, RESOURCE_CLAIMS_NOTE } from './field-rules.js';
import { WORKFLOW_ARGUMENTS_RECORD, type Arguments } from './parameter.js';
import { METADATA_RECORD, type Metadata } from './common-records.js';
import { field, record, ref, untyped, type RecordOf } from './record-declaration.js';
import type { Affinity, HostAlias, Toleration } from './scheduling.js';
import {
  EXECUTOR_CONFIG_RECORD,
  hooksField,
  METRICS_RECORD,
  RETRY_STRATEGY_RECORD,
  SYNCHRONIZATION_RECORD,
  TEMPLATE_RECORD,
  type ExecutorConfig,
  type Metrics,
  type PodResourceClaim,
  type RetryStrategy,
  type Synchronization,
  type Template,
} from './template.js';
import { SHUTDOWN_STRATEGIES } from './values/enums.js';
import { executorPluginsField } from './workflow-plugin.js';
import type { WorkflowStatus } from './workflow-status.js';
import type { PersistentVolumeClaimTemplate, Volume } from './volume.js';

/** A workflow built from a (Cluster)WorkflowTemplate. */
export const WORKFLOW_TEMPLATE_REF_RECORD = record('WorkflowTemplateRef', {
  name: field<string>(str()).required(),
  clusterScope: field<boolean>(bool()),
});
export interface WorkflowTemplateRef extends RecordOf<typeof WORKFLOW_TEMPLATE_REF_RECORD.fields> {}

export const POD_GC_RECORD = record('PodGC', {
  strategy: field<string>(str()),
  labelSelector: field<LabelSelector>(openObject(), ok('matchLabels and matchExpressions, as Kubernetes')),
  deleteDelayDuration: field<string>(str()),
});
export interface PodGC extends RecordOf<typeof POD_GC_RECORD.fields> {}

export const TTL_STRATEGY_RECORD = record('TTLStrategy', {
  secondsAfterCompletion: field<number>(int32()),
  secondsAfterSuccess: field<number>(int32()),
  secondsAfterFailure: field<number>(int32()),
});
export interface TTLStrategy extends RecordOf<typeof TTL_STRATEGY_RECORD.fields> {}

/** When the claims of volumeClaimTemplates are deleted: OnWorkflowSuccess (default) or OnWorkflowCompletion. */
export const VOLUME_CLAIM_GC_RECORD = record('VolumeClaimGC', { strategy: field<string>(str()) });

/** Labels and annotations the workflow gives itself; labelsFrom values are expressions. */
export const WORKFLOW_METADATA_RECORD = record('WorkflowMetadata', {
  labels: field<StringMap>(stringMap()),
  annotations: field<StringMap>(stringMap()),
  labelsFrom: field<Record<string, { expression: string }>>(
    openObject(),
    ok('label name → { expression }, evaluated over the workflow variables'),
  ),
});

/** Kubernetes' PodDisruptionBudgetSpec without `selector` (plugflow selects the workflow's pods). */
export const POD_DISRUPTION_BUDGET_RECORD = record('PodDisruptionBudget', {
  minAvailable: field<number | string>(openObject(), ok(KUBE)),
  maxUnavailable: field<number | string>(openObject(), ok(KUBE)),
  unhealthyPodEvictionPolicy: field<string>(str(), ok(KUBE)),
  selector: field<LabelSelector>(openObject(), no("plugflow selects the workflow's step pods itself")),
});

/** Kubernetes' PodDNSConfig (nameservers, searches, options), given to every step pod. */
export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: Array<{ name?: string; value?: string }>;
}

/**
 * WorkflowSpec. Its CRD node keeps unknown fields (documents written for the peer system use
 * many more), so the fields below that the CRD does not type (`untyped`) are stored as written
 * and checked by the engine's validator along the catalogue.
 */
export const WORKFLOW_SPEC_RECORD = record(
  'WorkflowSpec',
  {
    templates: field<Template[]>(
      keyedList(TEMPLATE_RECORD.schema, 'name', { description: 'The templates; names are unique.' }),
      rec('Template', 'list'),
    ),
    entrypoint: field<string>(str({ description: 'Name of the template to start.' })),
    arguments: ref<Arguments>(WORKFLOW_ARGUMENTS_RECORD),
    workflowTemplateRef: ref<WorkflowTemplateRef>(WORKFLOW_TEMPLATE_REF_RECORD),
    serviceAccountName: field<string>(str(), ok('service account of the step pods')),
    automountServiceAccountToken: field<boolean>(bool()),
    executor: ref<ExecutorConfig>(EXECUTOR_CONFIG_RECORD),
    /**
     * The workflow's own executor plugins (workflow-level plugins; controller gate
     * WORKFLOW_LEVEL_EXECUTOR_PLUGINS). When non-empty they replace the discovered ConfigMap
     * plugins in this workflow's agent pod.
     */
    executorPlugins: executorPluginsField(),
    volumes: field<Volume[]>(arr(openObject()), ok(KUBE)),
    volumeClaimTemplates: field<PersistentVolumeClaimTemplate[]>(
      arr(openObject()),
      ok('one PersistentVolumeClaim <workflow>-<name> per entry, made before the first pod, mounted by name'),
    ),
    volumeClaimGC: ref<RecordOf<typeof VOLUME_CLAIM_GC_RECORD.fields>>(VOLUME_CLAIM_GC_RECORD, 'one', 'when the claims are deleted', {
      crd: 'untyped',
    }),
    parallelism: field<number>(int64()),
    /** Set true to suspend the whole workflow; cleared on resume. */
    suspend: field<boolean>(bool()),
    /** `Stop` or `Terminate`: asks the controller to end the workflow. */
    shutdown: field<string>(oneOfStrings(SHUTDOWN_STRATEGIES)),
    nodeSelector: field<StringMap>(stringMap(), ok(KUBE)),
    affinity: field<Affinity>(openObject(), ok(KUBE)),
    tolerations: field<Toleration[]>(arr(openObject()), ok(KUBE)),
    imagePullSecrets: field<LocalObjectReference[]>(arr(openObject()), ok(KUBE)),
    hostNetwork: untyped<boolean>(ok(KUBE)),
    dnsPolicy: untyped<string>(ok(KUBE)),
    dnsConfig: untyped<PodDNSConfig>(ok(`of every step pod, ${KUBE}`)),
    hostAliases: untyped<HostAlias[]>(ok(KUBE)),
    securityContext: field<PodSecurityContext>(openObject(), ok(KUBE)),
    schedulerName: untyped<string>(ok(KUBE)),
    podPriorityClassName: untyped<string>(ok(KUBE)),
    podPriority: untyped<number>(no('deprecated by the peer; use podPriorityClassName')),
    podSpecPatch: field<string>(str(), ok('merged into every step pod')),
    podMetadata: ref<Metadata>(METADATA_RECORD, 'one', 'labels and annotations of every step pod'),
    /** Pod-level resources (pod spec.resources) of every step pod whose template sets none. */
    podResources: field<ResourceRequirements>(
      openObject({ description: "Kubernetes' ResourceRequirements: pod-level resources of every step pod." }),
      ok(POD_RESOURCES_NOTE),
    ),
    /** DRA claims (pod spec.resourceClaims) of every step pod whose template sets none. */
    resourceClaims: field<PodResourceClaim[]>(
      arr(openObject(), { description: "Kubernetes' PodResourceClaims: DRA claims of every step pod." }),
      ok(RESOURCE_CLAIMS_NOTE),
    ),
    onExit: field<string>(str()),
    hooks: hooksField(),
    activeDeadlineSeconds: field<number>(int64()),
    priority: field<number>(int32(), ok('orders the waiters of a synchronization lock: higher first, then older first')),
    podGC: ref<PodGC>(POD_GC_RECORD, 'one', 'step pods deleted per strategy, label selector and delay', { crd: 'open' }),
    ttlStrategy: ref<TTLStrategy>(TTL_STRATEGY_RECORD, 'one', 'the finished workflow is deleted after that many seconds', {
      crd: 'open',
    }),
    /** Kubernetes' PodDisruptionBudgetSpec without `selector` (plugflow selects the workflow's pods). */
    podDisruptionBudget: ref<{ minAvailable?: number | string; maxUnavailable?: number | string }>(
      POD_DISRUPTION_BUDGET_RECORD,
      'one',
      "a PodDisruptionBudget over the workflow's step pods while it runs",
      { crd: 'untyped' },
    ),
    metrics: ref<Metrics>(
      METRICS_RECORD,
      'one',
      "emitted on the controller's /metrics endpoint when the workflow ends (realtime gauges while it runs)",
      { crd: 'open' },
    ),
    synchronization: ref<Synchronization>(
      SYNCHRONIZATION_RECORD,
      'one',
      'the workflow stays Pending until it holds every lock named, and holds them until it ends',
      { crd: 'open' },
    ),
    retryStrategy: ref<RetryStrategy>(RETRY_STRATEGY_RECORD, 'one', 'the retryStrategy of every template without one'),
    templateDefaults: field<Partial<Template>>(openObject(), rec('Template', 'one', 'merged under every template, its own fields winning')),
    archiveLogs: untyped<boolean>(ok("the main container's stdout and stderr saved as the output artifact main-logs of every step pod")),
    /** Which artifact repository (a ConfigMap key) output artifacts go to; see src/artifacts/repository.ts. */
    artifactRepositoryRef: ref<ArtifactRepositoryRef>(
      ARTIFACT_REPOSITORY_REF_RECORD,
      'one',
      'the ConfigMap key output artifacts are stored under',
      { crd: 'untyped' },
    ),
    /** When stored output artifacts are deleted. */
    artifactGC: ref<ArtifactGC>(
      ARTIFACT_GC_RECORD,
      'one',
      "when stored output artifacts are deleted (a pod with the Secrets' credentials does it)",
      { crd: 'untyped' },
    ),
    workflowMetadata: ref<RecordOf<typeof WORKFLOW_METADATA_RECORD.fields>>(
      WORKFLOW_METADATA_RECORD,
      'one',
      'labels and annotations set on the workflow when it runs',
      { crd: 'open' },
    ),
  },
  { open: true },
);
export interface WorkflowSpec extends RecordOf<typeof WORKFLOW_SPEC_RECORD.fields> {}

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
