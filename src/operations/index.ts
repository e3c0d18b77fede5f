/**
 * Operations on existing workflows — stop, terminate, suspend, resume, retry, resubmit — in one place
 * for the CLI (with the user's kubeconfig) and the REST server (with the caller's token): each
 * takes the KubeClient to act with, so the API server's RBAC decides who may do what.
 */
export { OperationRefused } from './errors.js';
export { resubmitFrom, resubmitWorkflow, type ResubmitRequest } from './resubmit.js';
export { resumeRunningWorkflow, setSuspendedNode, type ResumeRequest, type Resumed, type SetRequest } from './resume.js';
export { retryFailedWorkflow, type Retried } from './retry.js';
export { retryArchivedWorkflow } from './retry-archived.js';
export { changeRunningWorkflow, type SpecOperation } from './shutdown.js';
export { type ArtifactTrust } from './artifact-trust.js';
export { nodeArtifacts, openArtifact, openNodeArtifact, type OpenedArtifact } from './artifacts.js';
export { withCreator } from './creator.js';
export { cronScheduleProblems, CronWorkflows, type BackfillAnswer } from './cron-workflows.js';
export { describeInputArtifacts, storedInputArtifact } from './input-artifacts.js';
export { clusterTemplates, InvalidTemplateSource, withLocalTemplates, workflowProblems } from './lint.js';
export { type TemplateKind, type TemplateObject, Templates } from './templates.js';
export { applySubmitOptions, parseSourceKind, parseSubmitOptions, workflowFromSource, type SubmitOptions } from './submit-from.js';
export { SyncLimits, syncRequest, type SyncLimit } from './sync-limits.js';
