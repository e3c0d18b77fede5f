/**
 * `startServer(options)`: the workflow REST server and event endpoint, in-process. Used by
 * `plugflow server`, by `plugflow dev` and by the tests. See src/server/README.md.
 */
import { hostname } from 'node:os';
import type { KubeAccess } from '../kube/kube-access.js';
import { KubeClient } from '../kube/client.js';
import { createLogger, type Logger } from '../log/logger.js';
import { Authenticator, type AuthMode } from './auth.js';
import { BindingCache } from './binding-cache.js';
import { Dispatcher, type DispatchResult, type EventJob } from './dispatch.js';
import { EventQueue } from './event-queue.js';
import { EventRecorder } from '../kube/event-recorder.js';
import { BodyBudget, LIMIT_DEFAULTS, type ServerLimits } from './limits.js';
import { ServerMetrics } from './metrics.js';
import { startMetricsServer } from './metrics-server.js';
import { createEventHandler, type DispatchMode } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { workflowRoutes } from './routes/workflows.js';
import { uiRoutes } from './routes/ui.js';
import { tlsMaterial } from '../tls/tls-material.js';
import { buildApp } from './app.js';
import { redactUrl } from './event-bus-connection.js';
import { EventBus, EventBusError, type EventBusOptions } from './event-bus.js';
import { ArchiveStore } from '../archive/archive-store.js';

export const DEFAULTS = {
  port: 2746,
  host: '0.0.0.0',
  authMode: 'client' as AuthMode,
  eventOperationQueueSize: 64,
  eventWorkerCount: 16,
  eventDispatch: 'sync' as DispatchMode,
  maxBodyBytes: 1024 * 1024,
  drainTimeoutMs: 30_000,
  /** `plugflow server --metrics-port`; startServer without the option picks a free port. */
  metricsPort: 9091,
};

export interface ServerOptions {
  /** The server's own identity: the binding cache, binding Events and --auth-mode=server calls. */
  kubeConfig: KubeAccess;
  /** Port to listen on (default 2746; 0 picks a free one). */
  port?: number;
  /** Address to listen on (default 0.0.0.0). */
  host?: string;
  /** HTTPS (default true). */
  secure?: boolean;
  /** PEM files; without them a self-signed certificate is generated. */
  tlsCert?: string;
  tlsKey?: string;
  /** `client` (default): callers' bearer tokens; `server`: the server's own account. */
  authMode?: AuthMode;
  /** Server mode: the shared bearer token every caller must send (`--server-token-file`). */
  serverToken?: string;
  /** Server mode without a token: anyone who reaches the port acts as the server. */
  unsafeServerModeWithoutAuth?: boolean;
  /** Serve only these namespaces (`--allowed-namespaces`); others get 403. Default: all. */
  allowedNamespaces?: string[];
  /** Port of /metrics (plain HTTP, same host); default a free port (the CLI: 9091). */
  metricsPort?: number;
  /** Timeouts, connection cap and bodies-in-flight budget (limits.ts LIMIT_DEFAULTS). */
  limits?: Partial<ServerLimits>;
  /** Most events in process at once (waiting + being dispatched); beyond it 503 (default 64). */
  eventOperationQueueSize?: number;
  /** Events dispatched at once (default 16: dispatch waits on the API server, not on CPU). */
  eventWorkerCount?: number;
  /**
   * Without a bus: `sync` (default): reply once the workflows exist, naming them; `async`: reply
   * at once (an event still queued dies with the process).
   */
  eventDispatch?: DispatchMode;
  /** Store accepted events in NATS JetStream and dispatch from there (event-bus.ts); replaces `eventDispatch`. */
  eventBus?: EventBusOptions;
  /** Largest request body in bytes; beyond it 413 (default 1 MiB). */
  maxBodyBytes?: number;
  /** Watch bindings in this namespace only (default: all namespaces). */
  namespace?: string;
  /** Longest wait for the event queue to empty on close (default 30 s). */
  drainTimeoutMs?: number;
  logger?: Logger;
  /** Register process metrics (CPU, memory, event loop) on /metrics (default true). */
  processMetrics?: boolean;
  /** Where plugflow is installed (its executor plugins serve every namespace); default $PLUGFLOW_NAMESPACE, else plugflow. */
  installNamespace?: string;
  /**
   * Stores (`host:port` or URLs) artifacts may be downloaded from besides the artifact
   * repositories (`--artifact-endpoint`; src/operations/artifact-trust.ts).
   */
  artifactEndpoints?: string[];
  /** The workflow archive (a PostgreSQL URL; `PLUGFLOW_ARCHIVE_URL`): /api/v1/archived-workflows. */
  archiveUrl?: string;
  /** Awaited by a worker before each event: lets tests and benchmarks hold workers. */
  dispatchGate?: () => Promise<void>;
}

export interface RunningServer {
  /** Base address, e.g. `https://127.0.0.1:2746`. */
  url: string;
  port: number;
  /** Where /metrics is served, e.g. `http://127.0.0.1:9091/metrics`. */
  metricsUrl: string;
  /** SHA-256 fingerprint of a generated certificate. */
  fingerprint?: string;
  metrics: ServerMetrics;
  /** Events accepted and not yet dispatched. */
  eventsInProcess(): number;
  /** The cached WorkflowEventBindings of a namespace, in evaluation order, with their problems. */
  bindings(namespace: string): { name: string; problems: string[] }[];
  /** Stops taking events (503), dispatches those accepted, then closes the listener. */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const o = { ...DEFAULTS, ...stripUndefined(options), kubeConfig: options.kubeConfig };
  const logger = o.logger ?? createLogger('server');
  const metrics = new ServerMetrics(o.processMetrics ?? true);
  // One client: its own identity for the binding Events, `kube.as(caller)` for callers' calls.
  const kube = await KubeClient.fromKubeConfig(o.kubeConfig, {
    connections: Math.max(8, o.eventWorkerCount * 2),
    userAgent: 'plugflow-server',
  });
  let auth: Authenticator;
  try {
    auth = new Authenticator({
      mode: o.authMode,
      kube,
      serverToken: o.serverToken,
      unsafeServerModeWithoutAuth: o.unsafeServerModeWithoutAuth,
      allowedNamespaces: o.allowedNamespaces,
    });
  } catch (err) {
    await kube.close().catch(() => {});
    throw err;
  }
  const limits: ServerLimits = { ...LIMIT_DEFAULTS, ...stripUndefined(o.limits ?? {}) };
  const budget = new BodyBudget(limits.maxBodiesInFlightBytes);
  // Events are written with the server's own account, never a caller's.
  const recorder = new EventRecorder({ client: kube, log: logger, component: 'plugflow-server', instance: hostname() });
  // The binding cache's informer runs on the same client, as the server itself.
  const bindings = new BindingCache({ client: kube, namespace: o.namespace, logger, recorder, metrics });
  const dispatcher = new Dispatcher({ kube, bindings, recorder, metrics, logger });
  const queue = new EventQueue<EventJob, DispatchResult>({
    capacity: o.eventOperationQueueSize,
    workers: o.eventWorkerCount,
    gate: o.dispatchGate,
    handle: (job) => dispatcher.dispatch(job),
    onDepth: (n) => metrics.queueDepth.set(n),
    // A server of every namespace shares its queue fairly between them; one of one namespace needs no shares.
    ...(o.namespace ? {} : { laneOf: (job: EventJob) => job.namespace }),
  });
  metrics.queueCapacity.set(queue.capacity);
  let bus: EventBus | undefined;
  if (o.eventBus) {
    if (!o.eventBus.key) {
      await kube.close().catch(() => {});
      throw new EventBusError(
        "--event-bus needs --event-bus-key-file: every stored event is sealed with it (callers' tokens, and the facts the dispatch trusts)",
      );
    }
    try {
      bus = await EventBus.connect(o.eventBus, {
        // A stored event is delivered again when the API server stays down: each try is shorter.
        dispatcher: new Dispatcher({ kube, bindings, recorder, metrics, logger, retryForMs: 20_000 }),
        logger,
        metrics,
        workers: o.eventWorkerCount,
        maxBodyBytes: o.maxBodyBytes,
        namespace: o.namespace,
      });
    } catch (err) {
      await kube.close().catch(() => {});
      throw err;
    }
  }

  const tls = o.secure === false ? undefined : await tlsMaterial(o.tlsCert, o.tlsKey);
  let draining = false;
  const events = createEventHandler({
    auth,
    queue,
    metrics,
    logger,
    mode: o.eventDispatch,
    ...(bus ? { bus } : {}),
    maxBodyBytes: o.maxBodyBytes,
    budget,
    lingerMs: limits.lingerMs,
  });
  const app = buildApp(tls, o.maxBodyBytes, logger, metrics, events, { auth, budget, limits });
  await app.register(healthRoutes, {
    notReady: () => (draining ? 'shutting down' : (bindings.readinessProblem() ?? bus?.readinessProblem())),
  });
  const archive = o.archiveUrl ? ArchiveStore.open(o.archiveUrl) : undefined;
  await app.register(workflowRoutes, {
    kube,
    auth,
    ...(archive ? { archive } : {}),
    installNamespace: o.installNamespace ?? process.env.PLUGFLOW_NAMESPACE,
    ...(o.artifactEndpoints ? { artifactEndpoints: o.artifactEndpoints } : {}),
  });
  await app.register(uiRoutes);

  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  try {
    await bindings.start();
    bus?.start();
    await app.listen({ port: o.port, host: o.host });
    metricsServer = await startMetricsServer(metrics, o.host, options.metricsPort ?? 0);
  } catch (err) {
    await metricsServer?.close().catch(() => {});
    await bus?.close(0).catch(() => {});
    await bindings.stop().catch(() => {});
    await app.close().catch(() => {});
    await kube.close().catch(() => {});
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  const shownHost = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
  const url = `${tls ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  logger.info('server started', {
    url,
    metricsUrl: metricsServer.url,
    authMode: o.authMode,
    allowedNamespaces: auth.allowedNamespaces ?? '(all)',
    tls: tls ? (tls.generated ? 'self-signed' : 'provided') : 'off',
    fingerprint: tls?.fingerprint,
    eventQueueSize: queue.capacity,
    eventWorkers: queue.workers,
    eventDispatch: bus ? 'bus' : o.eventDispatch,
    ...(o.eventBus
      ? {
          eventBus: o.eventBus.servers.map(redactUrl).join(','),
          eventBusReplicas: o.eventBus.replicas ?? 3,
          eventBusAuth: o.eventBus.unsafeWithoutAuth ? 'UNSAFE: none required' : `user ${o.eventBus.credentials?.user}, TLS`,
        }
      : {}),
    bindingNamespace: o.namespace ?? '(all)',
    limits,
  });
  if (o.eventBus?.unsafeWithoutAuth)
    logger.error(
      'UNSAFE: --unsafe-event-bus-without-auth: the event bus is reached without requiring credentials or TLS; whoever reaches it can read, forge or delete events',
    );
  if (auth.unguarded) {
    logger.error(
      "UNSAFE: --auth-mode=server with --unsafe-server-mode-without-auth: ANYONE who reaches this port can create, read and delete workflows as the server's own account" +
        (auth.allowedNamespaces ? ` in ${auth.allowedNamespaces.join(', ')}` : ' in EVERY namespace'),
    );
  } else if (o.authMode === 'server') {
    logger.warn(
      "auth-mode=server: every call runs as the server's own account for anyone holding the shared token of --server-token-file" +
        (auth.allowedNamespaces
          ? `, in ${auth.allowedNamespaces.join(', ')}`
          : ', in EVERY namespace (give --allowed-namespaces to narrow it)'),
    );
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      logger.info('server shutting down: draining the event queue', { inProcess: queue.inProcess });
      const drained = await Promise.race([
        queue.drain().then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), o.drainTimeoutMs).unref()),
      ]);
      if (!drained) logger.error('event queue not drained in time; events still in process are lost', { inProcess: queue.inProcess });
      if (bus && !(await bus.close(o.drainTimeoutMs)))
        logger.warn('stored events still being dispatched at shutdown; the bus delivers them to another replica', {
          dispatching: bus.dispatching,
        });
      await recorder.flush();
      await app.close();
      await metricsServer!.close();
      await bindings.stop();
      await archive?.close().catch(() => {});
      await kube.close();
      logger.info('server stopped');
    })());

  return {
    url,
    port,
    metricsUrl: metricsServer.url,
    fingerprint: tls?.fingerprint,
    metrics,
    eventsInProcess: () => queue.inProcess + (bus?.dispatching ?? 0),
    bindings: (ns) => bindings.bindingsIn(ns).map((b) => ({ name: b.name, problems: [...b.problems] })),
    close,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
