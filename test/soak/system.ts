/**
 * The whole system for the soak and the fuzz runs, started the way `startDevStack` does it
 * (local control plane, CRDs and RBAC from manifests/, each component with its own service
 * account token), except that the controller and the server run as child processes so that
 * chaos can SIGKILL them. The pod runner (the stand-in kubelet) runs in this process.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_INSTALL_NAMESPACE } from '../../src/api/index.js';
import { ControlPlane, freePort } from '../../src/devenv/control-plane.js';
import { installBase, serviceAccountKubeConfig } from '../../src/devenv/dev-stack.js';
import { KubeClient } from '../../src/kube/client.js';
import { NAMESPACES, SERVICE_ACCOUNTS } from '../../src/kube/resource.js';
import { createLogger } from '../../src/log/logger.js';
import { PodRunner } from '../../src/runner/runner.js';
import { Component, sleep } from './component.js';
import { startNatsCluster, type NatsCluster } from '../../src/devenv/nats-cluster.js';
import { randomBytes } from 'node:crypto';

export interface SystemOptions {
  dir: string;
  /** Namespaces to create; their `default` service accounts get the agent's role. */
  namespaces: string[];
  /** Run pods of this namespace only (default: all); the fuzz keeps its hostile workflows' pods unrun. */
  runnerNamespace?: string;
  /** Controller workers (default 8). */
  controllerWorkers?: number;
  /** Extra server flags, e.g. a larger event queue. */
  serverArgs?: string[];
  /** Run a three-node NATS JetStream cluster and give it to the server as its event bus. */
  eventBus?: boolean;
  /** Log lines about start-up. */
  say?: (line: string) => void;
  /** Objects to create before the controller and server start (plugins, templates, bindings). */
  prepare?: (client: KubeClient) => Promise<void>;
}

export interface System {
  plane: ControlPlane;
  admin: KubeConfig;
  client: KubeClient;
  adminToken: string;
  runner: PodRunner;
  controller: Component;
  server: Component;
  serverUrl: string;
  /** The server's /metrics (its own port). */
  serverMetricsUrl: string;
  controllerMetricsUrl: string;
  /** The server's event bus, when `eventBus`. */
  nats?: NatsCluster;
  stop(): Promise<void>;
}

async function waitForServiceAccount(client: KubeClient, namespace: string, name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.get(SERVICE_ACCOUNTS, namespace, name);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`service account ${namespace}/${name} did not appear: ${String(err)}`);
      await sleep(200);
    }
  }
}

/** Writes a kubeconfig file acting as a service account of the installation namespace. */
async function serviceAccountFile(admin: KubeConfig, client: KubeClient, dir: string, name: string): Promise<string> {
  await waitForServiceAccount(client, DEFAULT_INSTALL_NAMESPACE, name);
  const path = join(dir, `${name}.kubeconfig`);
  writeFileSync(path, (await serviceAccountKubeConfig(admin, DEFAULT_INSTALL_NAMESPACE, name)).exportConfig(), { mode: 0o600 });
  return path;
}

const running = new Set<() => Promise<void>>();

/** Stops every system this process started (hack/soak.ts and hack/fuzz.ts call it on Ctrl-C). */
export async function stopAllSystems(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

export async function startSystem(opts: SystemOptions): Promise<System> {
  const say = opts.say ?? (() => {});
  mkdirSync(opts.dir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const s of stops.reverse()) await s().catch((err) => say(`stop: ${String(err)}`));
      running.delete(stop);
    })());
  running.add(stop);
  try {
    // A fresh cluster every run: etcd data left in the directory by an earlier run is removed.
    rmSync(join(opts.dir, 'control-plane'), { recursive: true, force: true });
    const plane = new ControlPlane({ dir: join(opts.dir, 'control-plane'), log: say });
    await plane.start();
    stops.push(() => plane.stop());
    const { KubeConfig } = await import('@kubernetes/client-node');
    const admin = new KubeConfig();
    admin.loadFromFile(plane.kubeconfigPath);
    const client = await KubeClient.fromKubeConfig(admin);
    stops.push(() => client.close());
    for (const name of opts.namespaces) await client.create(NAMESPACES, undefined, { metadata: { name } });
    for (const name of opts.namespaces) await waitForServiceAccount(client, name, 'default');
    await installBase(admin, opts.namespaces);
    await opts.prepare?.(client);
    say('control plane, CRDs and RBAC ready');

    const runner = new PodRunner({
      kubeConfig: admin,
      dir: join(opts.dir, 'runner'),
      namespace: opts.runnerNamespace,
      log: createLogger('runner', 'warn'),
    });
    await runner.start();
    stops.push(() => runner.stop(2));

    const logDir = join(opts.dir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const metricsPort = await freePort();
    const controller = new Component({
      name: 'controller',
      args: [
        'controller',
        '--kubeconfig',
        await serviceAccountFile(admin, client, opts.dir, 'plugflow-controller'),
        '--metrics-port',
        String(metricsPort),
        '--leader-elect',
        '--workers',
        String(opts.controllerWorkers ?? 8),
      ],
      env: { WORKFLOW_EXECUTOR_PLUGINS: 'true', PLUGFLOW_NAMESPACE: DEFAULT_INSTALL_NAMESPACE },
      readyUrl: `http://127.0.0.1:${metricsPort}/readyz`,
      logDir,
      supervise: true,
      // By design the controller exits when it loses its lease and its Deployment restarts it.
      designedExit: /leadership lost; stopping the controller/,
    });
    let nats: NatsCluster | undefined;
    const busArgs: string[] = [];
    if (opts.eventBus) {
      nats = await startNatsCluster({ dir: join(opts.dir, 'nats'), log: say });
      stops.push(() => nats!.stop());
      writeFileSync(join(opts.dir, 'event-bus.key'), randomBytes(32).toString('hex'), { mode: 0o600 });
      busArgs.push(...nats.serverFlags(opts.dir), '--event-bus-key-file', join(opts.dir, 'event-bus.key'), '--event-bus-ack-wait', '10');
    }
    const serverPort = await freePort();
    const serverMetricsPort = await freePort();
    const server = new Component({
      name: 'server',
      args: [
        'server',
        '--kubeconfig',
        await serviceAccountFile(admin, client, opts.dir, 'plugflow-server'),
        '--port',
        String(serverPort),
        '--metrics-port',
        String(serverMetricsPort),
        '--host',
        '127.0.0.1',
        '--secure=false',
        '--auth-mode',
        'client',
        ...busArgs,
        ...(opts.serverArgs ?? []),
      ],
      readyUrl: `http://127.0.0.1:${serverPort}/readyz`,
      logDir,
      supervise: true,
    });
    stops.push(() => controller.stop());
    stops.push(() => server.stop());
    await Promise.all([controller.start(), server.start()]);
    say(`controller (pid ${controller.pid}) and server (pid ${server.pid}) ready`);
    return {
      plane,
      admin,
      client,
      adminToken: plane.adminToken,
      runner,
      controller,
      server,
      serverUrl: `http://127.0.0.1:${serverPort}`,
      serverMetricsUrl: `http://127.0.0.1:${serverMetricsPort}/metrics`,
      controllerMetricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      ...(nats ? { nats } : {}),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
