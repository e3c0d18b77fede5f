/**
 * The workflow controller, assembled: informers → work queue → N workers running the
 * reconciler, behind optional leader election, with /healthz, /readyz and /metrics.
 *
 * `startController` is the in-process API (`plugflow controller`, `plugflow dev` and the tests
 * use it). Start-up order matters: the health server first (probes answer during a long
 * election), then leadership, then the caches — and workers only once every cache has synced,
 * because reconciling from a partial cache could take a pod that is merely not listed yet for
 * one that was deleted.
 *
 * `stop()` is graceful: no new keys, queued and in-flight reconciles finish (bounded by
 * `drainTimeoutMs`), pending Events are flushed, the lease is released, then connections close.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { DEFAULT_INSTALL_NAMESPACE, executorPluginsEnabled, workflowLevelExecutorPluginsEnabled, type Workflow } from '../api/index.js';
import { reconcileWorkflow } from '../engine/index.js';
import { KubeClient } from '../kube/client.js';
import { AGENT_SERVICE_ACCOUNT } from '../plugins/index.js';
import { DEFAULT_POD_SECURITY_LEVEL, ENV_POD_SECURITY_LEVEL, parsePodSecurityLevel } from '../pods/pod-security-level.js';

import { createLogger } from '../log/logger.js';
import { ArtifactRepositories } from './artifact-repositories.js';
import { PodInputs } from './pod-inputs.js';
import { ImageEntrypoints } from './image-entrypoints.js';
import { gcsEndpointFromEnv, gitKnownHostsFromEnv } from '../artifacts/settings.js';
import { artifactDriversFromEnv } from '../artifacts/drivers.js';
import { ArtifactGC } from './artifact-gc.js';
import { ActionApplier } from './action-applier.js';
import { ControllerCaches } from './caches.js';
import { EventRecorder } from '../kube/event-recorder.js';
import { Expectations, FailureMemory } from './failure-memory.js';
import { startHealthServer, type HealthServer } from '../kube/health-server.js';
import { RequestAuthorizer } from '../kube/request-authorizer.js';
import { LeaderElector } from './leader-election.js';
import { shardingOf, type Sharding } from './sharding.js';
import { lostNodeWatchOf } from './lost-nodes.js';
import { runWorker } from './worker.js';
import { Synchronizer } from './synchronizer.js';
import { CustomMetricRegistry, metricsTtlFromEnv } from './custom-metric-registry.js';
import { CronReconciler } from './cron-reconciler.js';
import { ControllerMetrics } from './metrics.js';
import { PluginDiscovery } from './plugin-discovery.js';
import { Reconciler } from './reconciler.js';
import { wireTriggers } from './wiring.js';
import { WorkQueue } from './work-queue.js';
import { ResourceRunner } from './resource-runner.js';
import { workflowFeatures } from './features/index.js';
import { errorMessage } from '../log/error-message.js';
import { loadKubeAccess } from '../kube/kube-access.js';
import { ArchiveStore } from '../archive/archive-store.js';
import { Archiver, PRUNE_EVERY_MS } from './archiver.js';
import { DEFAULT_OFFLOAD_NODES_ABOVE, NodeOffload } from './node-offload.js';

export {
  CONTROLLER_COMPONENT,
  DEFAULT_IMAGE,
  DEFAULT_LEASE_NAME,
  DEFAULT_WORKERS,
  METRICS_AUTH_MODES,
  type ControllerOptions,
  type MetricsAuth,
} from './controller-options.js';
import { CONTROLLER_COMPONENT, DEFAULT_IMAGE, DEFAULT_LEASE_NAME, DEFAULT_WORKERS, type ControllerOptions } from './controller-options.js';

export interface RunningController {
  readonly metrics: ControllerMetrics;
  /** Port of the health/metrics server, when one runs. */
  readonly metricsPort?: number;
  readonly caches: ControllerCaches;
  readonly queue: WorkQueue;
  readonly identity: string;
  /** Readiness problems (empty when ready). */
  readinessProblems(): string[];
  /** Resolves when the controller has stopped (stop() or lost leadership). */
  readonly stopped: Promise<void>;
  stop(): Promise<void>;
}

export async function startController(opts: ControllerOptions = {}): Promise<RunningController> {
  const log = opts.log ?? createLogger('controller');
  const kc = await loadKubeAccess(opts.kubeConfig);
  const metrics = new ControllerMetrics({ processMetrics: opts.processMetrics ?? true });
  const client = await KubeClient.fromKubeConfig(kc, { onRequest: metrics.onRequest, userAgent: 'plugflow-controller' });
  const installNamespace = opts.installNamespace ?? process.env.PLUGFLOW_NAMESPACE ?? DEFAULT_INSTALL_NAMESPACE;
  const pluginsEnabled = opts.pluginsEnabled ?? executorPluginsEnabled();
  const workflowLevelPluginsEnabled = opts.workflowLevelPluginsEnabled ?? workflowLevelExecutorPluginsEnabled();
  const identity = opts.identity ?? process.env.POD_NAME ?? `${hostname()}-${randomBytes(4).toString('hex')}`;

  const plugins = pluginsEnabled ? new PluginDiscovery(client, installNamespace, log, { watchdogMs: opts.watchdogMs }) : undefined;
  const caches = new ControllerCaches(
    { client, namespace: opts.namespace, resyncMs: opts.resyncMs, watchdogMs: opts.watchdogMs, shardedPods: !!opts.sharding, log },
    plugins,
  );
  const queue = new WorkQueue();
  const failures = new FailureMemory();
  const creations = new Expectations();
  const deletions = new Expectations();
  const events = new EventRecorder({
    client,
    log,
    component: CONTROLLER_COMPONENT,
    instance: identity,
    enabled: opts.recordEvents ?? true,
  });
  const executorImage = opts.executorImage ?? process.env.PLUGFLOW_EXECUTOR_IMAGE ?? DEFAULT_IMAGE;
  const gcsEndpoint = opts.gcsEndpoint ?? gcsEndpointFromEnv();
  const gitKnownHosts = opts.gitKnownHosts ?? gitKnownHostsFromEnv();
  const artifactDrivers = opts.artifactDrivers ?? artifactDriversFromEnv();
  const envLevel = process.env[ENV_POD_SECURITY_LEVEL];
  const podSecurityLevel =
    opts.podSecurityLevel ?? (envLevel ? parsePodSecurityLevel(envLevel, ENV_POD_SECURITY_LEVEL) : DEFAULT_POD_SECURITY_LEVEL);
  const resources = new ResourceRunner({ client, log, enqueue: (key) => queue.add(key) });
  const podInputs = new PodInputs({
    caches,
    failures,
    creations,
    log,
    repositories: new ArtifactRepositories(client, installNamespace),
    ...(gcsEndpoint ? { gcsEndpoint } : {}),
    ...(gitKnownHosts ? { gitKnownHosts } : {}),
    artifactDrivers,
    images: new ImageEntrypoints({
      client,
      installNamespace,
      insecureRegistries: opts.insecureRegistries ?? insecureRegistriesFromEnv(),
      log,
    }),
  });
  const applier = new ActionApplier({
    client,
    caches,
    failures,
    creations,
    deletions,
    metrics,
    log,
    executorImage,
    agent: {
      image: opts.agentImage ?? executorImage,
      serviceAccountName: opts.agentServiceAccountName || AGENT_SERVICE_ACCOUNT,
    },
    podSecurityLevel,
    pluginsEnabled,
    workflowLevelPluginsEnabled,
    pluginsFor: (ns) => plugins?.pluginsFor(ns) ?? [],
    artifactDrivers,
    resources,
    podInputs,
  });
  // Active-active: the lock table asks it where lock users go; its coordinator keeps that table.
  const sharding: Sharding | undefined = opts.sharding
    ? shardingOf(
        { client, namespace: installNamespace, identity, leaseName: opts.leaseName ?? DEFAULT_LEASE_NAME, log },
        opts,
        caches,
        queue,
        () => locks,
      )
    : undefined;
  const locks: Synchronizer = new Synchronizer({
    client,
    enqueue: (key) => queue.add(key),
    log,
    ...(opts.sharding ? { route: (wf) => sharding!.routeLockUser(wf) } : {}),
  });
  const customMetrics = new CustomMetricRegistry(metrics.registry, log, opts.metricsTtlMs ?? metricsTtlFromEnv());
  const archiveStore = opts.archiveUrl ? ArchiveStore.open(opts.archiveUrl) : undefined;
  const archiver = archiveStore
    ? new Archiver({
        store: archiveStore,
        client,
        log,
        metrics,
        ...(opts.archiveTtlMs !== undefined ? { ttlMs: opts.archiveTtlMs } : {}),
        ...(opts.archiveKeepPerNamespace !== undefined ? { keepPerNamespace: opts.archiveKeepPerNamespace } : {}),
        namespaceUid: (ns) => caches.namespaces.get(undefined, ns)?.metadata?.uid,
      })
    : undefined;
  // A deleted namespace takes its archived workflows along (archiver.ts: namespaceDeleted).
  if (archiver) caches.namespaces.addHandlers({ onDelete: (n) => void archiver.namespaceDeleted(n.metadata!.name!, n.metadata?.uid) });
  // The archive's database also holds the nodes of workflows too large for their object.
  const offload = archiveStore
    ? new NodeOffload(archiveStore.nodeStatus(), opts.offloadNodesAbove ?? DEFAULT_OFFLOAD_NODES_ABOVE)
    : undefined;
  if (archiveStore)
    log.info('the workflow archive is on: finished workflows are written to PostgreSQL', {
      offloadNodesAbove: offload?.aboveNodes,
    });
  const features = workflowFeatures({
    caches,
    locks,
    resources,
    customMetrics,
    podInputs,
    events,
    log,
    artifactGC: new ArtifactGC({ client, log, events, executorImage, artifactDrivers, ...(gcsEndpoint ? { gcsEndpoint } : {}) }),
    ...(plugins ? { excludedPlugins: (ns: string) => plugins.excludedFor(ns) } : {}),
    nodeEvents: opts.nodeEvents === true && opts.recordEvents !== false,
    ...(archiver ? { archiver } : {}),
  });
  const lostNodes = lostNodeWatchOf(client, log, caches, queue, { graceMs: opts.nodeGraceMs, everyMs: opts.nodeCheckMs });
  const reconciler = new Reconciler({
    client,
    caches,
    applier,
    failures,
    events,
    metrics,
    log,
    engine: opts.engine ?? reconcileWorkflow,
    pluginsEnabled,
    workflowLevelPluginsEnabled,
    artifactDrivers: artifactDrivers.map((d) => d.name),
    ...(opts.maxStatusBytes !== undefined ? { maxStatusBytes: opts.maxStatusBytes } : {}),
    ...(opts.compressNodesAbove !== undefined ? { compressNodesAbove: opts.compressNodesAbove } : {}),
    ...(opts.maxLoopItems !== undefined ? { maxLoopItems: opts.maxLoopItems } : {}),
    ...(offload ? { offload } : {}),
    lostNodes,
    ...(sharding ? { identity, shardOwner: (wf: Workflow) => sharding.heldElsewhere(wf) } : {}),
    features,
  });
  const crons = new CronReconciler({ client, caches, events, log });
  wireTriggers({
    caches,
    queue,
    failures,
    creations,
    deletions,
    workflowDeleted: (key) => {
      for (const f of features) f.forget?.(key);
    },
  });

  const elector =
    opts.leaderElect && !opts.sharding
      ? new LeaderElector({
          client,
          namespace: installNamespace,
          name: opts.leaseName ?? DEFAULT_LEASE_NAME,
          identity,
          leaseDurationMs: opts.leaseDurationMs,
          renewDeadlineMs: opts.renewDeadlineMs,
          retryPeriodMs: opts.retryPeriodMs,
          log,
        })
      : undefined;
  let workersFailed: string | undefined;
  metrics.bind({
    queueDepth: () => queue.len(),
    inFlight: () => queue.inFlight(),
    workflowsByPhase: () => caches.workflowPhases(),
    informerAges: () => Object.fromEntries(caches.informers().map(({ name, informer }) => [name, informer.lastSyncAge()])),
    isLeader: () => (elector ? elector.isLeader() : true),
  });
  const readinessProblems = (): string[] => {
    if (elector && !elector.isLeader()) return [];
    const archiving = archiver?.readinessProblem();
    return [...caches.readinessProblems(), ...(archiving ? [archiving] : [])];
  };

  let health: HealthServer | undefined;
  if (opts.metricsPort !== undefined) {
    health = await startHealthServer(
      {
        live: () => workersFailed,
        ready: readinessProblems,
        metrics: () => metrics.text(),
        metricsContentType: Registry.PROMETHEUS_CONTENT_TYPE,
        ...((opts.metricsAuth ?? 'kubernetes') === 'kubernetes'
          ? { authorizeMetrics: authorizerOf(new RequestAuthorizer(client, '/metrics')) }
          : {}),
      },
      opts.metricsPort,
      opts.metricsHost,
    );
    log.info('health and metrics server listening', { port: health.port });
  }

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let stopping: Promise<void> | undefined;
  let workers: Promise<void>[] = [];

  /**
   * Graceful by default. After a lost lease it must not drain: another replica may already be
   * reconciling, so queued keys are dropped and only in-flight reconciles are waited for.
   */
  const shutdown = (drain: boolean): Promise<void> =>
    (stopping ??= (async () => {
      log.info(drain ? 'controller stopping: draining the work queue' : 'controller stopping without draining the queue');
      const drained = queue.shutDown({ drain });
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), opts.drainTimeoutMs ?? 30_000).unref());
      if ((await Promise.race([drained, timeout])) === 'timeout')
        log.warn('stopped before the queue was drained', { queued: queue.len(), inFlight: queue.inFlight() });
      await Promise.race([Promise.all(workers), timeout]);
      await events.flush();
      clearInterval(pruneTimer);
      locks.stop();
      lostNodes.stop();
      resources.stop();
      customMetrics.stop();
      await caches.stop();
      await elector?.stop();
      await sharding?.stop(drain);
      await health?.close();
      await archiveStore?.close().catch(() => {});
      await client.close();
      log.info('controller stopped');
      resolveStopped();
    })());
  const stop = (): Promise<void> => shutdown(true);
  let pruneTimer: NodeJS.Timeout | undefined;

  const begin = async (): Promise<void> => {
    if (elector) {
      const won = await elector.acquire(() => {
        log.error('leadership lost; stopping the controller');
        void shutdown(false);
      });
      if (!won) return;
    }
    caches.start();
    await caches.waitForSync();
    if (stopping) return;
    // Before any worker: the lock table comes from the statuses, never from an empty memory.
    // With sharding only the coordinator keeps one, from when it becomes the coordinator.
    if (sharding) await sharding.start();
    else locks.start(caches.workflows.list());
    lostNodes.start();
    log.info('caches synced; starting workers', {
      workers: opts.workers ?? DEFAULT_WORKERS,
      namespace: opts.namespace ?? '(all)',
      pluginsEnabled,
      workflowLevelPluginsEnabled,
      installNamespace,
      podSecurityLevel,
      artifactDrivers: artifactDrivers.map((d) => d.name),
    });
    // Archive retention, by the leader only, now and every PRUNE_EVERY_MS.
    if (archiver) {
      // With it, the offloaded nodes of workflows that are gone (deleted, archived first).
      const housekeeping = async (): Promise<void> => {
        if (sharding && !sharding.isCoordinator()) return;
        await archiver.prune();
        const namespaces = new Map(caches.namespaces.list().map((n) => [n.metadata!.name!, n.metadata!.uid!] as const));
        await archiver.purgeGone(namespaces, opts.namespace ? [opts.namespace] : undefined);
        const live = new Set(caches.workflows.list().map((wf) => wf.metadata.uid!));
        const swept = await offload?.sweep(live, opts.namespace ? [opts.namespace] : undefined).catch((err: unknown) => {
          log.warn('could not remove the offloaded nodes of deleted workflows; tried again later', { error: errorMessage(err) });
          return 0;
        });
        if (swept) log.info('removed the offloaded nodes of deleted workflows', { workflows: swept });
      };
      void housekeeping();
      pruneTimer = setInterval(() => void housekeeping(), PRUNE_EVERY_MS).unref();
    }
    workers = Array.from({ length: Math.max(1, opts.workers ?? DEFAULT_WORKERS) }, () =>
      runWorker({
        queue,
        reconcileWorkflow: (key) => reconciler.reconcile(key),
        reconcileCron: (key) => crons.reconcile(key),
        metrics,
        log,
        ...(sharding ? { sharding } : {}),
      }).catch((err: unknown) => {
        workersFailed = `a worker crashed: ${errorMessage(err)}`;
        log.error('worker crashed', { error: errorMessage(err) });
      }),
    );
  };
  // Leadership can take a while; startController returns at once and runs in the background.
  const started = begin().catch((err: unknown) => {
    workersFailed = `start-up failed: ${errorMessage(err)}`;
    log.error('controller start-up failed', { error: errorMessage(err) });
  });
  void started;

  return {
    metrics,
    metricsPort: health?.port,
    caches,
    queue,
    identity,
    readinessProblems,
    stopped,
    stop,
  };
}

/** PLUGFLOW_INSECURE_REGISTRIES: host:port entries separated by commas or spaces. */
export function insecureRegistriesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.PLUGFLOW_INSECURE_REGISTRIES ?? '').split(/[\s,]+/).filter(Boolean);
}

function authorizerOf(authorizer: RequestAuthorizer) {
  return (authorization: string | undefined) => authorizer.authorize(authorization);
}
