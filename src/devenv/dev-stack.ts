/**
 * The whole system on one machine: a control plane (local, or the cluster of a kubeconfig),
 * the CRDs and RBAC of manifests/, the pod runner (local control plane only: a real cluster has
 * kubelets), the controller and the server — each component acting with its own service
 * account's token, so dev mode exercises the same RBAC as an installation.
 *
 * Used by `plugflow dev`, the end-to-end suites and the soak test.
 */
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { KubeConfig, type V1RoleBinding, type V1ServiceAccount } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INSTALL_NAMESPACE, IMPERSONATE_CLUSTER_ROLE } from '../api/index.js';
import { startController, type RunningController } from '../controller/controller.js';
import { applyAndWait, readManifests } from '../kube/apply.js';
import { KubeClient } from '../kube/client.js';
import { isAlreadyExists } from '../kube/errors.js';
import { ROLE_BINDINGS, SERVICE_ACCOUNTS } from '../kube/resource.js';
import { requestServiceAccountToken } from '../kube/token-request.js';
import { createLogger, type Logger } from '../log/logger.js';
import { AGENT_SERVICE_ACCOUNT } from '../plugins/index.js';
import { PodRunner } from '../runner/runner.js';
import { startServer, type RunningServer } from '../server/server.js';
import { envelopeKey } from '../server/event-envelope.js';
import { startNatsCluster, type NatsCluster } from './nats-cluster.js';
import { startPostgres, type Postgres } from './postgres.js';
import { ControlPlane } from './control-plane.js';
import { startDevArtifacts } from './dev-artifacts.js';
import type { ObjectStore } from './object-store.js';
import { reapLeftovers } from './leftovers.js';
import { errorMessage } from '../log/error-message.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface DevStackOptions {
  /** Use this cluster instead of starting a local control plane. */
  kubeconfig?: string;
  context?: string;
  /** Working directory (control plane data, runner logs); a fresh one under .plugflow/ by default. */
  dir?: string;
  /** Executor plugins on (default true in dev). */
  plugins?: boolean;
  /** Server port (default 2746; 0 picks a free one). */
  serverPort?: number;
  /** HTTPS with a generated certificate (default true). */
  secure?: boolean;
  /** Namespaces whose `default` service account gets the agent's role (default: ["default"]). */
  workflowNamespaces?: string[];
  /** Plugin ConfigMap files (from `plugflow plugin build`) to install before the controller starts. */
  pluginConfigMaps?: string[];
  /** Start the local pod runner (default: only with a local control plane). */
  runner?: boolean;
  /** Start an object store and make it the default artifact repository (default: with the local runner). */
  artifacts?: boolean;
  controllerWorkers?: number;
  /** Start a PostgreSQL of its own and turn the workflow archive on (`plugflow dev` does; default off). */
  archive?: boolean;
  /** `jetstream`: start a three-node NATS JetStream cluster and give it to the server as its event bus (default `embedded`). */
  events?: 'embedded' | 'jetstream';
  progress?: (line: string) => void;
  log?: Logger;
}

export interface DevStack {
  kubeconfigPath: string;
  adminKubeConfig: KubeConfig;
  /** Token of the kubeconfig's user (local control plane: the admin). */
  adminToken?: string;
  controlPlane?: ControlPlane;
  runner?: PodRunner;
  /** The object store artifacts go to, when dev mode started one. */
  objectStore?: ObjectStore;
  /** The server's event bus, with `events: 'jetstream'`. */
  nats?: NatsCluster;
  /** The archive's database, with `archive`. */
  postgres?: Postgres;
  controller: RunningController;
  server: RunningServer;
  dir: string;
  stop(): Promise<void>;
}

/** A KubeConfig for the same cluster that authenticates as a service account (TokenRequest). */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
  seconds = 24 * 3600,
): Promise<KubeConfig> {
  const token = await withClient(admin, (client) =>
    requestServiceAccountToken(client, namespace, name, { audiences: [], expirationSeconds: seconds }),
  );
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name,
  });
  return kc;
}

/** Kinds of manifests/install.yaml that define the API: the CRDs and the policy guarding Workflow status. */
const API_KINDS = new Set(['CustomResourceDefinition', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** Installs what an installation has besides the Deployments: namespace, CRDs and their admission policy, RBAC. */
export async function installBase(admin: KubeConfig, workflowNamespaces: string[]): Promise<void> {
  const base = join(REPO_ROOT, 'manifests', 'base');
  const docs = [
    ...readManifests(join(base, 'namespace.yaml')),
    ...readManifests(join(REPO_ROOT, 'manifests', 'install.yaml')).filter((o) => API_KINDS.has(o.kind ?? '')),
    ...['rbac-controller.yaml', 'rbac-server.yaml', 'rbac-agent.yaml'].flatMap((f) => readManifests(join(base, f))),
  ];
  await applyAndWait(admin, docs);
  const exists = (err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  };
  // The agent's own account and role in each workflow namespace (README "Pod security").
  await withClient(admin, async (client) => {
    for (const namespace of workflowNamespaces) {
      const account: V1ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: AGENT_SERVICE_ACCOUNT } };
      await client.create(SERVICE_ACCOUNTS, namespace, account).catch(exists);
      const binding: V1RoleBinding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: AGENT_SERVICE_ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plugflow-agent' },
        subjects: [{ kind: 'ServiceAccount', name: AGENT_SERVICE_ACCOUNT, namespace }],
      };
      await client.create(ROLE_BINDINGS, namespace, binding).catch(exists);
      // The controller may act as this namespace's accounts (resource templates): granted here only.
      await client.create(ROLE_BINDINGS, namespace, impersonationBinding(namespace)).catch(exists);
    }
  });
}

/**
 * The RoleBinding that lets the controller act as the service accounts of `namespace` (README
 * "Install": one per namespace that runs workflows).
 */
export function impersonationBinding(namespace: string, installNamespace = DEFAULT_INSTALL_NAMESPACE): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: IMPERSONATE_CLUSTER_ROLE, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: IMPERSONATE_CLUSTER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'plugflow-controller', namespace: installNamespace }],
  };
}

/** Runs `use` with a client for the kubeconfig's cluster and user, closed afterwards. */
async function withClient<T>(kc: KubeConfig, use: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = await KubeClient.fromKubeConfig(kc);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** Waits until the service account exists (the service-account controller creates `default`). */
async function waitForServiceAccount(admin: KubeConfig, namespace: string, name: string): Promise<void> {
  await withClient(admin, async (client) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await client.get(SERVICE_ACCOUNTS, namespace, name);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`service account ${namespace}/${name} did not appear: ${errorMessage(err)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  });
}

export async function startDevStack(opts: DevStackOptions = {}): Promise<DevStack> {
  const say = opts.progress ?? (() => {});
  const log = opts.log ?? createLogger('dev');
  const dir = resolve(opts.dir ?? join(REPO_ROOT, '.plugflow', `dev-${Date.now()}`));
  // What earlier runs that were killed left in .plugflow/ (an explicit --dir is cleaned up by
  // the control plane when it starts there).
  if (!opts.dir) for (const line of await reapLeftovers(dirname(dir), 'dev-', 'control-plane')) say(line);
  mkdirSync(dir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((err) => log.warn(`stop: ${String(err)}`));
  };
  try {
    let controlPlane: ControlPlane | undefined;
    let kubeconfigPath: string;
    let admin: KubeConfig;
    if (opts.kubeconfig) {
      kubeconfigPath = resolve(opts.kubeconfig);
      admin = loadKubeConfig(kubeconfigPath, opts.context);
      say(`using the cluster of ${kubeconfigPath} (context ${admin.getCurrentContext()})`);
    } else {
      say('starting a local control plane (etcd, kube-apiserver, kube-controller-manager)…');
      controlPlane = new ControlPlane({ dir: join(dir, 'control-plane'), log: say });
      await controlPlane.start();
      stops.push(() => controlPlane!.stop());
      kubeconfigPath = controlPlane.kubeconfigPath;
      admin = loadKubeConfig(kubeconfigPath);
    }
    const workflowNamespaces = opts.workflowNamespaces ?? ['default'];
    say('installing CRDs and RBAC…');
    await installBase(admin, workflowNamespaces);
    for (const file of opts.pluginConfigMaps ?? []) {
      const docs = readManifests(file).map((o) => ({
        ...o,
        metadata: { ...o.metadata, namespace: o.metadata?.namespace ?? DEFAULT_INSTALL_NAMESPACE },
      }));
      await applyAndWait(admin, docs);
      say(`installed plugin ConfigMap ${file}`);
    }

    let runner: PodRunner | undefined;
    if (opts.runner ?? controlPlane !== undefined) {
      say('starting the local pod runner…');
      runner = new PodRunner({ kubeConfig: admin, dir: join(dir, 'runner'), log: createLogger('runner') });
      await runner.start();
      stops.push(() => runner!.stop());
    }
    let objectStore: ObjectStore | undefined;
    if (opts.artifacts ?? runner !== undefined) {
      const client = await KubeClient.fromKubeConfig(admin);
      try {
        objectStore = await startDevArtifacts(client, workflowNamespaces, join(dir, 'object-store'), say);
      } finally {
        await client.close();
      }
      stops.push(() => objectStore!.stop());
    }

    let postgres: Postgres | undefined;
    if (opts.archive) {
      say('starting PostgreSQL for the workflow archive…');
      postgres = await startPostgres({ log: say });
      stops.push(() => postgres!.stop());
    }

    await waitForServiceAccount(admin, DEFAULT_INSTALL_NAMESPACE, 'plugflow-controller');
    const pluginsEnabled = opts.plugins ?? true;
    say(`starting the controller (executor plugins ${pluginsEnabled ? 'on' : 'off'})…`);
    const controller = await startController({
      kubeConfig: await serviceAccountKubeConfig(admin, DEFAULT_INSTALL_NAMESPACE, 'plugflow-controller'),
      pluginsEnabled,
      installNamespace: DEFAULT_INSTALL_NAMESPACE,
      workers: opts.controllerWorkers,
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      ...(postgres ? { archiveUrl: postgres.url } : {}),
      log: createLogger('controller'),
    });
    stops.push(() => controller.stop());

    let nats: NatsCluster | undefined;
    if (opts.events === 'jetstream') {
      say('starting a three-node NATS JetStream cluster for the event bus…');
      nats = await startNatsCluster({ dir: join(dir, 'nats'), log: say });
      stops.push(() => nats!.stop());
    }
    say('starting the server…');
    const server = await startServer({
      kubeConfig: await serviceAccountKubeConfig(admin, DEFAULT_INSTALL_NAMESPACE, 'plugflow-server'),
      port: opts.serverPort ?? 2746,
      host: '127.0.0.1',
      secure: opts.secure ?? true,
      authMode: 'client',
      // Dev mode's key lives as long as its bus: both are made fresh for each run.
      ...(nats ? { eventBus: { ...nats.connection, key: envelopeKey(randomBytes(32)) } } : {}),
      ...(postgres ? { archiveUrl: postgres.url } : {}),
      logger: createLogger('server'),
    });
    stops.push(() => server.close());

    const adminToken = controlPlane?.adminToken ?? admin.getCurrentUser()?.token;
    return {
      kubeconfigPath,
      adminKubeConfig: admin,
      adminToken,
      controlPlane,
      runner,
      objectStore,
      nats,
      postgres,
      controller,
      server,
      dir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
