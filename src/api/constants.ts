/**
 * Names shared by every component. One place, so that a label or path is never spelled twice.
 * See DESIGN.md "Names".
 */

/** API group of every plugflow resource. */
export const GROUP = 'plugflow.io';
/** The one served version of every plugflow resource. */
export const VERSION = 'v1alpha1';
/** plugflow's own release (the CLI's --version, the server's /api/v1/version). */
export const PLUGFLOW_RELEASE = '0.1.0';
/** apiVersion field value of plugflow resources. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Prefix of every label and annotation plugflow writes. */
export const LABEL_PREFIX = 'workflows.plugflow.io/';
/** Label key that marks a ConfigMap as an executor plugin. */
export const LABEL_CONFIGMAP_TYPE = `${LABEL_PREFIX}configmap-type`;
/** Label value of executor plugin ConfigMaps. */
export const CONFIGMAP_TYPE_EXECUTOR_PLUGIN = 'ExecutorPlugin';
/** Label on pods and TaskSets: the owning workflow's name. */
export const LABEL_WORKFLOW = `${LABEL_PREFIX}workflow`;
/**
 * Label on workflows that take synchronization locks (set by the controller when it first sees
 * one wait for a lock): with several active replicas all of them go to the one that grants locks.
 */
export const LABEL_USES_LOCKS = `${LABEL_PREFIX}uses-locks`;
/** Label on pods: the node id the pod runs. */
export const LABEL_NODE_ID = `${LABEL_PREFIX}node-id`;
/** Label on pods: the pod's role (`step` or `agent`). */
export const LABEL_COMPONENT = `${LABEL_PREFIX}component`;
/** Label on workflows submitted by an event: the template they came from. */
export const LABEL_WORKFLOW_TEMPLATE = `${LABEL_PREFIX}workflow-template`;
/** Label on workflows submitted by an event: the cluster template they came from. */
export const LABEL_CLUSTER_WORKFLOW_TEMPLATE = `${LABEL_PREFIX}cluster-workflow-template`;
/** Label on workflows submitted by an event: the binding that matched. */
export const LABEL_WORKFLOW_EVENT_BINDING = `${LABEL_PREFIX}workflow-event-binding`;
/** Annotation on workflows submitted by an event that has an id: the id (src/server/event-id.ts). */
export const ANNOTATION_EVENT_ID = `${LABEL_PREFIX}event-id`;
/** What tells an event's workflow from another of its name: a digest of the event (src/server/event-id.ts). */
export const ANNOTATION_EVENT_DIGEST = `${LABEL_PREFIX}event-digest`;
/** Label on workflows: set to `true` once the workflow reached a final phase. */
export const LABEL_COMPLETED = `${LABEL_PREFIX}completed`;
/** Label on workflows: their phase (lets `list` select by phase on the server). */
export const LABEL_PHASE = `${LABEL_PREFIX}phase`;
/** Template annotation: the displayName of the template's nodes (src/engine/display-name.ts). */
export const ANNOTATION_DISPLAY_NAME = `${LABEL_PREFIX}display-name`;
/** On a workflow made by `plugflow resubmit`: the name of the workflow it was made from. */
export const LABEL_RESUBMITTED_FROM = `${LABEL_PREFIX}resubmitted-from-workflow`;

/** Environment variable that turns executor plugins on in the controller. */
export const FEATURE_GATE_EXECUTOR_PLUGINS = 'WORKFLOW_EXECUTOR_PLUGINS';
/**
 * Environment variable that lets workflows declare their own executor plugins
 * (`spec.executorPlugins`), independently of FEATURE_GATE_EXECUTOR_PLUGINS (the peer's
 * `ARGO_WORKFLOW_LEVEL_EXECUTOR_PLUGINS`, flag `--workflow-level-executor-plugins`).
 */
export const FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS = 'WORKFLOW_LEVEL_EXECUTOR_PLUGINS';
/** Where a plugin sidecar finds its own token. */
export const PLUGIN_TOKEN_PATH = '/var/run/workflow/token';
/** Default namespace of the installation (controller, server, shared plugins). */
export const DEFAULT_INSTALL_NAMESPACE = 'plugflow';

/**
 * The ClusterRole that lets the controller act as a namespace's service accounts (resource
 * templates, image lookups with their pull secrets). It is bound per namespace (a RoleBinding in
 * each namespace that runs workflows), never cluster-wide: bound everywhere it would let the
 * controller's token act as any account of the cluster, kube-system's included.
 */
export const IMPERSONATE_CLUSTER_ROLE = 'plugflow-controller-impersonate';
/** Suffix of the ConfigMap (and plugin service account) name of a plugin. */
export const EXECUTOR_PLUGIN_SUFFIX = '-executor-plugin';
/** Path of the plugin RPC, relative to the plugin's base address. */
export const PLUGIN_EXECUTE_PATH = '/api/v1/template.execute';

/** Resource plurals of the plugflow CRDs. */
export const PLURAL = {
  workflow: 'workflows',
  workflowTemplate: 'workflowtemplates',
  clusterWorkflowTemplate: 'clusterworkflowtemplates',
  workflowEventBinding: 'workfloweventbindings',
  workflowTaskSet: 'workflowtasksets',
  cronWorkflow: 'cronworkflows',
} as const;

/** Returns true when the executor plugin gate is on in this environment. */
export function executorPluginsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FEATURE_GATE_EXECUTOR_PLUGINS] === 'true';
}

/** Returns true when the workflow-level executor plugin gate is on in this environment. */
export function workflowLevelExecutorPluginsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS] === 'true';
}

/** Names of the containers plugflow adds to a step pod (src/pods/layout.ts); user containers may not use them. */
export const INIT_CONTAINER = 'init';
export const MAIN_CONTAINER = 'main';
export const WAIT_CONTAINER = 'wait';
export const RESERVED_CONTAINER_NAMES: readonly string[] = [INIT_CONTAINER, MAIN_CONTAINER, WAIT_CONTAINER];

/** The artifact a step's main container log is saved as (archiveLogs). */
export const MAIN_LOGS_ARTIFACT = 'main-logs';
