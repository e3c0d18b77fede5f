/**
 * The agent pod's names, ports and user (COMPAT.md "Discovery and the agent pod"): plugin
 * validation checks sidecars against them, src/pods/agent-pod.ts builds the pod with them, and
 * `plugflow agent` runs inside it.
 */

/** Where the init and main containers see the plugin token volumes: `<dir>/<plugin>/token`. */
export const AGENT_TOKEN_DIR = '/var/run/plugflow/tokens';
/** The standard in-cluster service account path (client libraries read it). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** User, group and fsGroup of the agent's own containers. */
export const AGENT_UID = 8737;
/** Port of the agent's /healthz, /readyz and /metrics. */
export const DEFAULT_AGENT_HEALTH_PORT = 9766;
export const AGENT_COMPONENT = 'agent';
export const AGENT_CONTAINER = 'main';
export const AGENT_INIT_CONTAINER = 'init';
/**
 * The service account agent pods run as by default, in each workflow's namespace: a dedicated
 * one, so that no other pod there (steps run as the workflow's account, `default` by default)
 * can read TaskSets — literal HTTP header values included — or write task results.
 */
export const AGENT_SERVICE_ACCOUNT = 'plugflow-agent';
