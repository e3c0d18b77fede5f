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
export { validateWorkflow } from './validate.js';
export { resumeWorkflow, ResumeError, type ResumeOptions, type ResumeResult } from './resume.js';
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
