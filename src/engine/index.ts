/**
 * Public surface of the pure workflow engine. The controller, the REST server and the CLI
 * import from here (importing the files directly also works; these are the supported names).
 */
export type {
  AgentObservation,
  EngineAction,
  MemoCacheObservation,
  MemoEntry,
  Observations,
  PodObservation,
  ReconcileResult,
  TaskObservation,
  ResourceObservation,
  ContainerObservation,
  FetchedManifest,
  TemplateSource,
  TemplateSourceKind,
} from './contract.js';
export { templateSourceKey } from './contract.js';
export { reconcileWorkflow } from './reconcile.js';
export { DEFAULT_MAX_LOOP_ITEMS } from './sequence.js';
export { validateWorkflow } from './validate.js';
export {
  resumeWorkflow,
  ResumeError,
  setSuspendedNodes,
  SET_PHASES,
  type ResumeOptions,
  type ResumeResult,
  type SetOptions,
} from './resume.js';
export { effectiveSpec, missingTemplateSources, type SourceRef } from './effective-spec.js';
export {
  fetchTemplateSources,
  resolveTemplateSources,
  type SourceFetch,
  type SourceLookup,
  type SourceResolution,
  type TemplateSources,
} from './template-sources.js';
export { nodeIdFor, podNameFor } from './node-naming.js';
export { PLUGINS_DISABLED_MESSAGE } from './execute-task.js';
export { MAX_AGENT_REPLACEMENTS } from './agent-replacement.js';
export { memoCacheNames } from './memoize.js';
export { CONFIGMAP_TYPE_PARAMETER, parameterConfigMapNames } from './parameter-config-maps.js';
export { unregisteredDetail } from './artifact-drivers.js';
export {
  ARTIFACT_GC_FINALIZER,
  artifactsToCollect,
  collectedBy,
  dueStrategies,
  type GCStrategy,
  usesArtifactGC,
  type WorkflowStatusWithGC,
} from './artifact-gc.js';
export { type LockClaim, type LockObservation } from './contract.js';
export { type Emission, type MetricKind, NAMESPACE_LABEL, statusMetrics } from './custom-metrics.js';
export { evaluateRetryExpression, evaluateWhenText } from './expressions.js';
export { taskName } from './node-naming.js';
export { allHold, firstHolding, parseCondition, type Requirement, requirementText } from './resource-conditions.js';
export { parseFlags, type ResourceFlags } from './resource-flags.js';
export { parseJsonPath } from './resource-json-path.js';
export { memoizedStatus, ResubmitError, resubmittedWorkflow } from './resubmit.js';
export { RetryError, type RetryOptions, retryWorkflow } from './retry-workflow.js';
export { lockKeysInStatus, parseLockKey } from './synchronization.js';
export { checkSpecFields } from './validate-fields.js';
export { WORKFLOW_PLUGINS_DISABLED_DETAIL } from './workflow-plugins.js';
export { nodeEvents, type NodeEvent } from './node-events.js';
