/** What `startController` takes (controller.ts), with its defaults' names. */
import type { ArtifactDriver } from '../artifacts/drivers.js';
import type { KubeAccess } from '../kube/kube-access.js';
import type { Logger } from '../log/logger.js';
import type { PodSecurityLevel } from '../pods/pod-policy.js';
import type { Engine } from './reconciler.js';
export const DEFAULT_IMAGE = 'plugflow/plugflow:0.1.0';
export const DEFAULT_LEASE_NAME = 'plugflow-controller';
/**
 * Parallel reconciles. A reconcile mostly waits on the API server (a write takes 40–60 ms under
 * load), so the bound is in-flight writes, not CPU: at 8, 1,000 workflows at once ran at 0.75× the
 * tuned peer; at 32 (the peer's own default `--workflow-workers`) at 0.97× with less CPU per
 * workflow (bench/RESULTS.md, "peer").
 */
export const DEFAULT_WORKERS = 32;
/** `source.component` of the Events the controller writes. */
export const CONTROLLER_COMPONENT = 'plugflow-controller';

export interface ControllerOptions {
  /** A loaded kubeconfig (client-node's KubeConfig is one), a kubeconfig file path, or undefined for the default (in-cluster or ~/.kube/config). */
  kubeConfig?: KubeAccess | string;
  /** Reconcile workflows of this namespace only; all namespaces when undefined. */
  namespace?: string;
  /** Parallel reconciles (different workflows). Default DEFAULT_WORKERS. */
  workers?: number;
  /** Executor plugins on; default from WORKFLOW_EXECUTOR_PLUGINS. */
  pluginsEnabled?: boolean;
  /** Workflows may declare their own plugins (spec.executorPlugins); default from WORKFLOW_LEVEL_EXECUTOR_PLUGINS. */
  workflowLevelPluginsEnabled?: boolean;
  /** Where shared plugins and the leader lease live; default PLUGFLOW_NAMESPACE or `plugflow`. */
  installNamespace?: string;
  /** Image of the init/wait containers of step pods. */
  executorImage?: string;
  /** A GCS-compatible server for vendorCObject artifacts (default: PLUGFLOW_GCS_ENDPOINT). */
  gcsEndpoint?: string;
  /** known_hosts lines git repositories' SSH host keys are checked against (default: PLUGFLOW_GIT_KNOWN_HOSTS). */
  gitKnownHosts?: string;
  /** The artifact driver plugins step pods may use (default: PLUGFLOW_ARTIFACT_DRIVERS; artifacts/drivers.ts). */
  artifactDrivers?: ArtifactDriver[];
  /**
   * Registries (host:port) asked over plain HTTP for the entrypoint of images run without a
   * command (default: PLUGFLOW_INSECURE_REGISTRIES, comma-separated).
   */
  insecureRegistries?: string[];
  /** Image of the agent pod (default: the executor image). */
  agentImage?: string;
  /**
   * Service account agent pods run as, in each workflow's namespace, unless the workflow names
   * one in spec.executor.serviceAccountName. Default AGENT_SERVICE_ACCOUNT (`plugflow-agent`);
   * it needs the plugflow-agent ClusterRole bound in that namespace.
   */
  agentServiceAccountName?: string;
  /** Pod Security Standards level every created pod must meet; default PLUGFLOW_POD_SECURITY_LEVEL or `baseline`. */
  podSecurityLevel?: PodSecurityLevel;
  /** Port of /healthz, /readyz and /metrics; 0 picks a free port; undefined runs no server. */
  metricsPort?: number;
  metricsHost?: string;
  /**
   * Who may read /metrics, which carries label values of tenants' workflows: `kubernetes`
   * (default) asks the API server (TokenReview, then SubjectAccessReview for `get` on the
   * non-resource URL /metrics — what a Prometheus service account is usually granted); `none`
   * leaves it open, for a port nobody else reaches. /healthz and /readyz are always open.
   */
  metricsAuth?: MetricsAuth;
  /** Run only while holding the Lease `leaseName` in the installation namespace. */
  leaderElect?: boolean;
  /**
   * Active-active: every replica reconciles a share of the workflows, assigned by consistent
   * hashing over the live replicas' Leases (sharding.ts). Replaces `leaderElect`.
   */
  sharding?: boolean;
  /** A node whose kubelet's Lease has not changed for this long is lost (lost-nodes.ts). Default 40 s. */
  nodeGraceMs?: number;
  /** How often the nodes of step pods are checked. Default 10 s. */
  nodeCheckMs?: number;
  /** Custom metric series not updated for this long are removed. Default PLUGFLOW_METRICS_TTL or 10 min. */
  metricsTtlMs?: number;
  leaseName?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  identity?: string;
  resyncMs?: number;
  watchdogMs?: number;
  /**
   * The workflow archive (a PostgreSQL URL, `PLUGFLOW_ARCHIVE_URL`): finished workflows are
   * written there before anything may delete them (archiver.ts). Off without one.
   */
  archiveUrl?: string;
  /** Archive retention: remove archived workflows finished longer ago (ms). Default: kept. */
  archiveTtlMs?: number;
  /** Archive retention: keep only the newest this many per namespace. Default: all. */
  archiveKeepPerNamespace?: number;
  /** Record Kubernetes Events on workflow start and finish (each is an API write). Default true. */
  recordEvents?: boolean;
  /** Also record the peer's node Events (WorkflowNodeRunning, WorkflowNodeSucceeded, …). Default false. */
  nodeEvents?: boolean;
  /** Longest wait for queued and in-flight reconciles on stop. Default 30 s. */
  drainTimeoutMs?: number;
  /** Include process metrics (CPU, RSS, GC) in /metrics. Default true. */
  processMetrics?: boolean;
  /** Largest serialized workflow the controller writes; a bigger status ends it in Error. Default 1.5 MiB. */
  maxStatusBytes?: number;
  /** Node maps whose JSON is larger are stored compressed (status.compressedNodes). Default 256 KiB. */
  compressNodesAbove?: number;
  /** Most items one loop may expand to; a bigger loop fails its node naming the field. Default 100,000. */
  maxLoopItems?: number;
  /** With the archive on: workflows with more nodes keep them in its database (node-offload.ts). Default 10,000. */
  offloadNodesAbove?: number;
  log?: Logger;
  /** The engine; tests may wrap it. Default src/engine's reconcileWorkflow. */
  engine?: Engine;
}

export type MetricsAuth = 'kubernetes' | 'none';
export const METRICS_AUTH_MODES: readonly MetricsAuth[] = ['kubernetes', 'none'];
