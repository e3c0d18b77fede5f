/**
 * The resources plugflow reads and writes, and how their REST paths are built. One table, so a
 * group or plural is never spelled twice and the informer, the client's metrics and the callers
 * agree on names.
 */
import { GROUP, PLURAL, VERSION } from '../api/index.js';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /**
   * Whether `status` is its own subresource (only a write to `…/status` changes it). The Workflow
   * CRD has none: its status and labels go in one write (docs/workflow-status.md).
   */
  statusSubresource?: boolean;
}

export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true, statusSubresource: true };
export const NAMESPACES: ResourceType = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
export const CONFIGMAPS: ResourceType = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const SERVICE_ACCOUNTS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  kind: 'ServiceAccount',
  namespaced: true,
};
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };
export const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true };
export const TOKEN_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'tokenreviews',
  kind: 'TokenReview',
  namespaced: false,
};

export const SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

export const SELF_SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'selfsubjectaccessreviews',
  kind: 'SelfSubjectAccessReview',
  namespaced: false,
};
export const SELF_SUBJECT_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'selfsubjectreviews',
  kind: 'SelfSubjectReview',
  namespaced: false,
};
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};
export const NODES: ResourceType = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, statusSubresource: true };
export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
export const PERSISTENT_VOLUME_CLAIMS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  namespaced: true,
};
export const POD_DISRUPTION_BUDGETS: ResourceType = {
  group: 'policy',
  version: 'v1',
  plural: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  namespaced: true,
};
export const ROLES: ResourceType = { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true };
export const ROLE_BINDINGS: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'rolebindings',
  kind: 'RoleBinding',
  namespaced: true,
};
export const CLUSTER_ROLES: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
};
export const CLUSTER_ROLE_BINDINGS: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  plural: 'clusterrolebindings',
  kind: 'ClusterRoleBinding',
  namespaced: false,
};
export const WORKFLOWS: ResourceType = { group: GROUP, version: VERSION, plural: PLURAL.workflow, kind: 'Workflow', namespaced: true };
export const WORKFLOW_TASK_SETS: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL.workflowTaskSet,
  kind: 'WorkflowTaskSet',
  namespaced: true,
  statusSubresource: true,
};
export const WORKFLOW_TEMPLATES: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL.workflowTemplate,
  kind: 'WorkflowTemplate',
  namespaced: true,
};
export const CLUSTER_WORKFLOW_TEMPLATES: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL.clusterWorkflowTemplate,
  kind: 'ClusterWorkflowTemplate',
  namespaced: false,
};

export const CRON_WORKFLOWS: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL.cronWorkflow,
  kind: 'CronWorkflow',
  namespaced: true,
  statusSubresource: true,
};
export const WORKFLOW_EVENT_BINDINGS: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL.workflowEventBinding,
  kind: 'WorkflowEventBinding',
  namespaced: true,
};

/** `apiVersion` of objects of this type. */
export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/**
 * REST path of a collection (no name) or an object. `namespace` undefined on a namespaced type
 * means all namespaces (list/watch only).
 */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  let path = base;
  if (type.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  if (!type.namespaced && namespace) throw new Error(`${type.kind} is cluster-scoped; no namespace expected`);
  path += `/${type.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) {
    if (name === undefined) throw new Error('a subresource needs an object name');
    path += `/${subresource}`;
  }
  return path;
}

/** Label used in metrics: `plural` for the core group, `plural.group` otherwise. */
export function resourceLabel(type: ResourceType, subresource?: string): string {
  const r = type.group ? `${type.plural}.${type.group}` : type.plural;
  return subresource ? `${r}/${subresource}` : r;
}
