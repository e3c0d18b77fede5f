/**
 * `plugflow controller`: runs the workflow controller (src/controller) until SIGTERM/SIGINT,
 * then stops gracefully (drains the queue, releases the leader lease). Exits non-zero when it
 * loses leadership, so its Deployment restarts it as a clean follower.
 */
import { InvalidArgumentError, type Command } from 'commander';
import {
  executorPluginsEnabled,
  FEATURE_GATE_EXECUTOR_PLUGINS,
  FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS,
  parseSecondsOrDuration,
  workflowLevelExecutorPluginsEnabled,
} from '../api/index.js';
import { createLogger } from '../log/logger.js';
import { DEFAULT_IMAGE, DEFAULT_WORKERS, METRICS_AUTH_MODES, startController, type MetricsAuth } from '../controller/controller.js';
import { AGENT_SERVICE_ACCOUNT } from '../plugins/index.js';
import { POD_SECURITY_LEVELS, type PodSecurityLevel } from '../pods/pod-policy.js';
import { DEFAULT_POD_SECURITY_LEVEL, ENV_POD_SECURITY_LEVEL, parsePodSecurityLevel } from '../pods/pod-security-level.js';
import { DEFAULT_MAX_STATUS_BYTES } from '../controller/status-size.js';
import { DEFAULT_MAX_LOOP_ITEMS } from '../engine/index.js';
import { DEFAULT_OFFLOAD_NODES_ABOVE } from '../controller/node-offload.js';
import { errorMessage } from '../log/error-message.js';
import { port, positiveInt } from './option-values.js';

interface ControllerFlags {
  archiveTtl?: number;
  archiveKeepPerNamespace?: number;
  kubeconfig?: string;
  namespace?: string;
  workers: number;
  leaderElect: boolean;
  sharding: boolean;
  metricsPort: number;
  executorImage: string;
  agentServiceAccount?: string;
  podSecurityLevel?: PodSecurityLevel;
  events: boolean;
  nodeEvents: boolean;
  maxStatusBytes: number;
  maxLoopItems: number;
  offloadNodesAbove: number;
  insecureRegistry: string[];
  metricsAuth: MetricsAuth;
  workflowLevelExecutorPlugins: boolean;
}

export function registerControllerCommands(program: Command): void {
  program
    .command('controller')
    .description('run the workflow controller: watch workflows, run their steps as pods or plugin tasks')
    .option('--kubeconfig <path>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--namespace <ns>', 'reconcile workflows of this namespace only (default: all namespaces)')
    .option('--workers <n>', 'workflows reconciled in parallel', positiveInt, DEFAULT_WORKERS)
    .option('--leader-elect', 'run only while holding the leader Lease in the installation namespace', false)
    .option(
      '--sharding',
      "active-active: every replica reconciles a share of the workflows (consistent hashing over the replicas' Leases); replaces --leader-elect",
      false,
    )
    .option('--metrics-port <port>', 'port of /healthz, /readyz and /metrics', port, 9090)
    .option(
      '--metrics-auth <mode>',
      "who may read /metrics (it carries label values of tenants' workflows): kubernetes = a bearer token whose account may get the non-resource URL /metrics; none = anyone who reaches the port",
      (v: string) => {
        if (!(METRICS_AUTH_MODES as readonly string[]).includes(v))
          throw new InvalidArgumentError(`--metrics-auth must be one of ${METRICS_AUTH_MODES.join(', ')}, got "${v}"`);
        return v as MetricsAuth;
      },
      'kubernetes' as MetricsAuth,
    )
    .option(
      '--executor-image <image>',
      'image of the init and wait containers of step pods (and of agent pods)',
      process.env.PLUGFLOW_EXECUTOR_IMAGE ?? DEFAULT_IMAGE,
    )
    .option(
      '--agent-service-account <name>',
      'service account agent pods run as in each workflow namespace (bind the plugflow-agent ClusterRole to it there)',
      process.env.PLUGFLOW_AGENT_SERVICE_ACCOUNT ?? AGENT_SERVICE_ACCOUNT,
    )
    .option(
      '--pod-security-level <level>',
      `Pod Security Standards level every step and agent pod must meet (${POD_SECURITY_LEVELS.join(', ')}; default $${ENV_POD_SECURITY_LEVEL} or ${DEFAULT_POD_SECURITY_LEVEL}); namespaces can only raise it`,
      (v: string) => {
        try {
          return parsePodSecurityLevel(v, '--pod-security-level');
        } catch (err) {
          throw new InvalidArgumentError(errorMessage(err));
        }
      },
    )
    .option(
      '--insecure-registry <host:port>',
      'a registry asked over plain HTTP for the entrypoint of images run without a command (repeatable; default $PLUGFLOW_INSECURE_REGISTRIES)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--no-events', 'do not record Kubernetes Events on workflow start and finish')
    .option(
      '--node-events',
      "also record the peer's node Events (WorkflowNodeRunning, WorkflowNodeSucceeded, WorkflowNodeFailed, WorkflowNodeError; each an API write; default $PLUGFLOW_NODE_EVENTS=true, else off)",
      process.env.PLUGFLOW_NODE_EVENTS === 'true',
    )
    .option(
      '--workflow-level-executor-plugins',
      `let workflows declare their own executor plugins (spec.executorPlugins; default $${FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS}=true, else off): independent of ${FEATURE_GATE_EXECUTOR_PLUGINS}; a workflow's own plugins replace the ConfigMap plugins for it`,
      workflowLevelExecutorPluginsEnabled(),
    )
    .option(
      '--archive-ttl <duration>',
      'with the archive: remove archived workflows finished longer ago than this (e.g. 30d, 12h); default: kept',
      archiveTtl,
    )
    .option(
      '--archive-keep-per-namespace <n>',
      'with the archive: keep only the newest N archived workflows of each namespace',
      positiveInt,
    )
    .option(
      '--max-status-bytes <n>',
      'largest serialized workflow written; a workflow whose status grows past it ends in Error',
      positiveInt,
      DEFAULT_MAX_STATUS_BYTES,
    )
    .option(
      '--max-loop-items <n>',
      'most items one loop (withItems, withParam, withSequence) may expand to; a bigger loop fails its step naming the field',
      positiveInt,
      DEFAULT_MAX_LOOP_ITEMS,
    )
    .option(
      '--offload-nodes-above <n>',
      'with the archive on (PLUGFLOW_ARCHIVE_URL), a workflow with more nodes keeps them in its database and only a summary in the object',
      positiveInt,
      DEFAULT_OFFLOAD_NODES_ABOVE,
    )
    .addHelpText(
      'after',
      `\nEnvironment: ${FEATURE_GATE_EXECUTOR_PLUGINS}=true enables executor plugins declared in ConfigMaps; ` +
        `${FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS}=true (or --workflow-level-executor-plugins) lets workflows declare their own in spec.executorPlugins ` +
        '(off: such a workflow is refused naming the field); PLUGFLOW_NAMESPACE is the installation namespace (default plugflow); ' +
        `${ENV_POD_SECURITY_LEVEL} and PLUGFLOW_AGENT_SERVICE_ACCOUNT are the defaults of --pod-security-level and --agent-service-account; ` +
        'PLUGFLOW_ARCHIVE_URL (postgres://…) turns the workflow archive on.',
    )
    .action(async (flags: ControllerFlags, cmd: Command) => {
      const log = createLogger('controller');
      if (flags.leaderElect && flags.sharding)
        throw new InvalidArgumentError(
          '--leader-elect and --sharding are two ways to run replicas: choose one (--sharding runs them all at once)',
        );
      if (cmd.getOptionValueSource('offloadNodesAbove') === 'cli' && !process.env.PLUGFLOW_ARCHIVE_URL)
        throw new InvalidArgumentError('--offload-nodes-above needs the archive database: set PLUGFLOW_ARCHIVE_URL');
      if ((flags.archiveTtl !== undefined || flags.archiveKeepPerNamespace !== undefined) && !process.env.PLUGFLOW_ARCHIVE_URL)
        throw new InvalidArgumentError('--archive-ttl and --archive-keep-per-namespace need the archive: set PLUGFLOW_ARCHIVE_URL');
      const controller = await startController({
        kubeConfig: flags.kubeconfig,
        namespace: flags.namespace,
        workers: flags.workers,
        leaderElect: flags.leaderElect,
        sharding: flags.sharding,
        metricsPort: flags.metricsPort,
        metricsAuth: flags.metricsAuth,
        executorImage: flags.executorImage,
        agentServiceAccountName: flags.agentServiceAccount,
        podSecurityLevel: flags.podSecurityLevel,
        recordEvents: flags.events,
        nodeEvents: flags.nodeEvents,
        // From the environment, not a flag: the URL holds the database password (a Secret in the install).
        ...(process.env.PLUGFLOW_ARCHIVE_URL ? { archiveUrl: process.env.PLUGFLOW_ARCHIVE_URL } : {}),
        ...(flags.archiveTtl !== undefined ? { archiveTtlMs: flags.archiveTtl } : {}),
        ...(flags.archiveKeepPerNamespace !== undefined ? { archiveKeepPerNamespace: flags.archiveKeepPerNamespace } : {}),
        maxStatusBytes: flags.maxStatusBytes,
        maxLoopItems: flags.maxLoopItems,
        offloadNodesAbove: flags.offloadNodesAbove,
        ...(flags.insecureRegistry.length ? { insecureRegistries: flags.insecureRegistry } : {}),
        pluginsEnabled: executorPluginsEnabled(),
        workflowLevelPluginsEnabled: flags.workflowLevelExecutorPlugins,
        log,
      });
      let signalled = false;
      const onSignal = (signal: string): void => {
        if (signalled) return;
        signalled = true;
        log.info('signal received; shutting down', { signal });
        void controller.stop();
      };
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      process.once('SIGINT', () => onSignal('SIGINT'));
      await controller.stopped;
      process.exit(signalled ? 0 : 1);
    });
}

/** `30d`, `12h`, `90m` (or seconds): the archive's retention by age, in ms. */
function archiveTtl(v: string): number {
  try {
    const ms = parseSecondsOrDuration(v, { field: '--archive-ttl' });
    if (ms <= 0) throw new Error('must be longer than 0');
    return ms;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}
