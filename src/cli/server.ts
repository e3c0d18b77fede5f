/**
 * `plugflow server`: the workflow REST API and event endpoint (src/server). Stops gracefully on
 * SIGTERM/SIGINT: events already accepted are dispatched before the process exits.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { createLogger } from '../log/logger.js';
import type { AuthMode } from '../server/auth.js';
import type { DispatchMode } from '../server/routes/events.js';
import { LIMIT_DEFAULTS } from '../server/limits.js';
import { DEFAULTS, startServer } from '../server/server.js';
import { EVENT_BUS_DEFAULTS, type EventBusOptions } from '../server/event-bus.js';
import { envelopeKey } from '../server/event-envelope.js';
import { busConnectOptions, DEFAULT_BUS_USER } from '../server/event-bus-connection.js';
import { errorMessage } from '../log/error-message.js';
import { loadKubeAccess } from '../kube/kube-access.js';
import { port, positiveInt } from './option-values.js';

function bool(v: string | undefined): boolean {
  if (v === undefined || v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw new InvalidArgumentError('expected true or false');
}

function namespaces(v: string): string[] {
  return v
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

function oneOf<T extends string>(...allowed: T[]) {
  return (v: string): T => {
    if (!(allowed as string[]).includes(v)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}`);
    return v as T;
  };
}

interface ServerFlags {
  port: number;
  host: string;
  secure: boolean;
  artifactEndpoint: string[];
  tlsCert?: string;
  tlsKey?: string;
  authMode: AuthMode;
  eventOperationQueueSize: number;
  eventWorkerCount: number;
  eventDispatch: DispatchMode;
  maxBodySize: number;
  namespace?: string;
  kubeconfig?: string;
  metricsPort: number;
  serverTokenFile?: string;
  allowedNamespaces?: string[];
  unsafeServerModeWithoutAuth?: boolean;
  maxConnections: number;
  maxConnectionsPerSource: number;
  maxStreamsPerSource: number;
  maxBodiesInFlight: number;
  eventBus?: string[];
  eventBusKeyFile?: string;
  eventBusReplicas: number;
  eventBusAckWait: number;
  eventBusRetryFor: number;
  eventBusUser: string;
  eventBusPasswordFile?: string;
  eventBusCaFile?: string;
  unsafeEventBusWithoutAuth?: boolean;
}

export function registerServerCommands(program: Command): void {
  program
    .command('server')
    .description('serve the workflow REST API and the event endpoint')
    .option('--port <port>', 'port to listen on', (v) => Number.parseInt(v, 10), DEFAULTS.port)
    .option('--host <address>', 'address to listen on', DEFAULTS.host)
    .option('--secure [bool]', 'serve HTTPS (--secure=false for plain HTTP)', bool, true)
    .option('--tls-cert <file>', 'PEM certificate (default: a generated self-signed one)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option(
      '--auth-mode <mode>',
      "client: callers' bearer tokens decide (RBAC); server: the server's own account",
      oneOf<AuthMode>('client', 'server'),
      DEFAULTS.authMode,
    )
    .option(
      '--event-operation-queue-size <n>',
      'most events in process at once; beyond it 503',
      positiveInt,
      DEFAULTS.eventOperationQueueSize,
    )
    .option('--event-worker-count <n>', 'events dispatched at once', positiveInt, DEFAULTS.eventWorkerCount)
    .option(
      '--event-dispatch <mode>',
      'without a bus — sync: reply once the workflows exist (durable); async: reply at once (an event still queued dies with the process)',
      oneOf<DispatchMode>('async', 'sync'),
      DEFAULTS.eventDispatch,
    )
    .option(
      '--event-bus <nats-urls>',
      'store accepted events in NATS JetStream and dispatch from there (comma-separated nats:// URLs); replaces --event-dispatch',
      (v: string) =>
        v
          .split(',')
          .map((u) => u.trim())
          .filter((u) => u !== ''),
    )
    .option('--event-bus-key-file <file>', '--event-bus: a secret (>= 32 bytes) every replica shares; every stored event is sealed with it')
    .option('--event-bus-user <name>', "--event-bus: the bus account's user", DEFAULT_BUS_USER)
    .option('--event-bus-password-file <file>', "--event-bus: file holding the bus user's password (a mounted Secret)")
    .option('--event-bus-ca-file <file>', "--event-bus: PEM CA the bus's TLS certificates are verified against (default: the system's)")
    .option(
      '--unsafe-event-bus-without-auth',
      '--event-bus: connect without credentials or TLS: whoever reaches the bus can read, forge or delete events',
    )
    .option('--event-bus-replicas <n>', '--event-bus: replicas of the event stream', positiveInt, EVENT_BUS_DEFAULTS.replicas)
    .option(
      '--event-bus-ack-wait <seconds>',
      "--event-bus: how long a replica may hold an event unacknowledged before the stream delivers it to another (a dead replica's events wait this long)",
      positiveInt,
      EVENT_BUS_DEFAULTS.ackWaitMs / 1000,
    )
    .option(
      '--event-bus-retry-for <seconds>',
      '--event-bus: how long after its acceptance an event whose dispatch keeps failing (the API server down) is retried before it goes to the dead letters',
      positiveInt,
      EVENT_BUS_DEFAULTS.retryForMs / 1000,
    )
    .option('--max-body-size <bytes>', 'largest request body; beyond it 413', positiveInt, DEFAULTS.maxBodyBytes)
    .option('--namespace <ns>', 'watch WorkflowEventBindings in this namespace only (default: all)')
    .option('--metrics-port <port>', '/metrics on its own port (plain HTTP), not on the API port', port, DEFAULTS.metricsPort)
    .option('--server-token-file <file>', '--auth-mode=server: file holding the shared bearer token every caller must send')
    .option('--allowed-namespaces <a,b>', 'serve only these namespaces (403 for others)', namespaces)
    .option('--unsafe-server-mode-without-auth', '--auth-mode=server with no token: ANYONE who reaches the port acts as the server')
    .option('--max-connections <n>', 'most open connections', positiveInt, LIMIT_DEFAULTS.maxConnections)
    .option(
      '--max-connections-per-source <n>',
      'most open connections from one address (IPv6: one /64)',
      positiveInt,
      LIMIT_DEFAULTS.maxConnectionsPerSource,
    )
    .option(
      '--max-streams-per-source <n>',
      'most HTTP/2 streams open at once from one address, over all its connections',
      positiveInt,
      LIMIT_DEFAULTS.maxStreamsPerSource,
    )
    .option(
      '--max-bodies-in-flight <bytes>',
      'most bytes of request bodies being received at once; beyond it 503',
      positiveInt,
      LIMIT_DEFAULTS.maxBodiesInFlightBytes,
    )
    .option(
      '--artifact-endpoint <host:port>',
      'a store (host:port or URL) artifacts may be downloaded from besides the artifact repositories (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--kubeconfig <path>', "the server's own kubeconfig (default: $KUBECONFIG, ~/.kube/config or in-cluster)")
    .action(async (flags: ServerFlags, cmd: Command) => {
      const logger = createLogger('server');
      if (flags.eventBus && cmd.getOptionValueSource('eventOperationQueueSize') === 'cli')
        throw new InvalidArgumentError(
          '--event-operation-queue-size is for a server without --event-bus (with a bus the stream holds the events waiting; --event-worker-count still sets how many are dispatched at once)',
        );
      if (flags.eventBus && cmd.getOptionValueSource('eventDispatch') === 'cli')
        throw new InvalidArgumentError(
          '--event-dispatch is for a server without --event-bus (with a bus, events are stored, then dispatched)',
        );
      for (const [f, flag] of [
        ['eventBusKeyFile', '--event-bus-key-file'],
        ['eventBusReplicas', '--event-bus-replicas'],
        ['eventBusAckWait', '--event-bus-ack-wait'],
        ['eventBusRetryFor', '--event-bus-retry-for'],
        ['eventBusUser', '--event-bus-user'],
        ['eventBusPasswordFile', '--event-bus-password-file'],
        ['eventBusCaFile', '--event-bus-ca-file'],
        ['unsafeEventBusWithoutAuth', '--unsafe-event-bus-without-auth'],
      ] as const)
        if (!flags.eventBus && cmd.getOptionValueSource(f) === 'cli') throw new InvalidArgumentError(`${flag} needs --event-bus`);
      if (flags.eventBus && !flags.eventBusKeyFile)
        throw new InvalidArgumentError(
          '--event-bus needs --event-bus-key-file: a secret of at least 32 bytes every replica shares, which every stored event is sealed with',
        );
      if (flags.serverTokenFile && flags.authMode !== 'server')
        throw new InvalidArgumentError(
          '--server-token-file is for --auth-mode=server (in client mode callers send their own Kubernetes tokens)',
        );
      const eventBus = flags.eventBus ? eventBusOptions(flags, flags.eventBus) : undefined;
      const kc = await loadKubeAccess(flags.kubeconfig);
      const serverToken = flags.serverTokenFile ? readFileSync(flags.serverTokenFile, 'utf8') : undefined;
      const server = await startServer({
        kubeConfig: kc,
        port: flags.port,
        host: flags.host,
        secure: flags.secure,
        tlsCert: flags.tlsCert,
        tlsKey: flags.tlsKey,
        authMode: flags.authMode,
        eventOperationQueueSize: flags.eventOperationQueueSize,
        eventWorkerCount: flags.eventWorkerCount,
        eventDispatch: flags.eventDispatch,
        ...(eventBus ? { eventBus } : {}),
        maxBodyBytes: flags.maxBodySize,
        // From the environment, not a flag: the URL holds the database password (a Secret in the install).
        ...(process.env.PLUGFLOW_ARCHIVE_URL ? { archiveUrl: process.env.PLUGFLOW_ARCHIVE_URL } : {}),
        namespace: flags.namespace,
        metricsPort: flags.metricsPort,
        serverToken,
        allowedNamespaces: flags.allowedNamespaces,
        ...(flags.artifactEndpoint.length ? { artifactEndpoints: flags.artifactEndpoint } : {}),
        unsafeServerModeWithoutAuth: flags.unsafeServerModeWithoutAuth === true,
        limits: {
          maxConnections: flags.maxConnections,
          maxConnectionsPerSource: flags.maxConnectionsPerSource,
          maxStreamsPerSource: flags.maxStreamsPerSource,
          maxBodiesInFlightBytes: flags.maxBodiesInFlight,
        },
        logger,
      });
      const stop = (signal: string) => {
        logger.info('signal received', { signal });
        server.close().then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error('shutdown failed', { error: errorMessage(err) });
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
}

/** The bus options of the flags, refused here (before anything starts) when they cannot reach a bus safely. */
function eventBusOptions(flags: ServerFlags, servers: string[]): EventBusOptions {
  const o: EventBusOptions = {
    servers,
    replicas: flags.eventBusReplicas,
    ackWaitMs: flags.eventBusAckWait * 1000,
    retryForMs: flags.eventBusRetryFor * 1000,
    key: envelopeKey(readFileSync(flags.eventBusKeyFile!)),
    ...(flags.eventBusPasswordFile
      ? { credentials: { user: flags.eventBusUser, password: readFileSync(flags.eventBusPasswordFile, 'utf8').trim() } }
      : {}),
    ...(flags.eventBusCaFile ? { ca: readFileSync(flags.eventBusCaFile, 'utf8') } : {}),
    unsafeWithoutAuth: flags.unsafeEventBusWithoutAuth === true,
  };
  try {
    busConnectOptions(o);
  } catch (err) {
    throw new InvalidArgumentError(errorMessage(err));
  }
  return o;
}
