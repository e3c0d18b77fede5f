/**
 * A local NATS JetStream cluster (nats-server, built from the Go module proxy by
 * hack/build-store-server.sh into the cache) for `plugflow dev --events=jetstream`, the event bus
 * tests and the bench: `nodes` servers on loopback, routed into one cluster, each with its own
 * store directory, so a replicated stream survives one of them being SIGKILLed. Start-up is timed
 * and a node that does not come up is named with the end of its output.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './control-plane.js';
import { startServerProcess, toolPath, type ServerProcess } from './server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface NatsCluster {
  /** Client URLs, one per node: `nats://127.0.0.1:PORT`. */
  servers: string[];
  /** SIGKILLs node `i` (its store stays). */
  kill(i: number): Promise<void>;
  /** Starts node `i` again on its ports and store, and waits until it is healthy. */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Nodes (default 3; 1 runs a single server without a cluster). */
  nodes?: number;
  /** Store directory (default: a fresh temporary one, removed on stop). */
  dir?: string;
  log?: (line: string) => void;
}

/** Builds nats-server if needed and returns the binary's path. */
export function ensureNatsServerBinary(log: (line: string) => void = () => {}): Promise<string> {
  return toolPath([join(REPO_ROOT, 'hack', 'build-store-server.sh'), 'nats-server'], 'building nats-server', log);
}

export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsCluster> {
  try {
    return await startOnce(opts);
  } catch (err) {
    // A free port taken by another process between our probe and the server's bind: once more.
    if (!/address already in use/.test((err as Error).message)) throw err;
    opts.log?.(`[nats] a port was taken meanwhile; starting again on others`);
    return startOnce(opts);
  }
}

async function startOnce(opts: NatsClusterOptions): Promise<NatsCluster> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = await ensureNatsServerBinary(log);
  const n = opts.nodes ?? 3;
  const owns = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'plugflow-nats-'));
  // One at a time, and all different: a port just freed may be handed out again.
  const taken = new Set<number>();
  const port = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) return (taken.add(p), p);
    }
  };
  const ports: { client: number; route: number; http: number }[] = [];
  for (let i = 0; i < n; i++) ports.push({ client: await port(), route: await port(), http: await port() });
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
  const args = (i: number) => {
    const p = ports[i]!;
    const store = join(dir, `node-${i}`);
    mkdirSync(store, { recursive: true });
    const base = ['-a', '127.0.0.1', '-p', String(p.client), '-m', String(p.http), '-n', `plugflow-nats-${i}`, '-js', '-sd', store];
    return n === 1 ? base : [...base, '--cluster_name', 'plugflow', '--cluster', `nats://127.0.0.1:${p.route}`, '--routes', routes];
  };
  const start = (i: number) =>
    startServerProcess({
      name: `nats-server node ${i} (client port ${ports[i]!.client})`,
      file: bin,
      args: args(i),
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      // Healthy: JetStream is up and, in a cluster, the node has joined the meta group.
      ready: async () => (await fetch(`http://127.0.0.1:${ports[i]!.http}/healthz?js-enabled-only=true`)).ok,
      timeoutMs: 60_000,
    });
  const nodes: (ServerProcess | undefined)[] = [];
  try {
    const started = await Promise.allSettled(ports.map((_, i) => start(i)));
    started.forEach((r, i) => (nodes[i] = r.status === 'fulfilled' ? r.value : undefined));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // A cluster takes streams only once it has elected its meta leader.
    await waitForMetaLeader(ports.map((p) => p.http));
  } catch (err) {
    await Promise.all(nodes.map((p) => (p ? p.stop() : Promise.resolve())));
    if (owns) rmSync(dir, { recursive: true, force: true });
    throw new Error(`starting a ${n}-node NATS JetStream cluster failed: ${(err as Error).message}`);
  }
  const servers = ports.map((p) => `nats://127.0.0.1:${p.client}`);
  log(
    `[nats] JetStream ${n === 1 ? 'server' : `cluster of ${n} nodes`} ready at ${servers.join(',')} in ${Date.now() - t0} ms (stores in ${dir})`,
  );
  return {
    servers,
    kill: async (i) => {
      await nodes[i]?.kill();
      nodes[i] = undefined;
    },
    restart: async (i) => {
      await nodes[i]?.stop();
      nodes[i] = await start(i);
    },
    stop: async () => {
      await Promise.all(nodes.map((p) => (p ? p.stop() : Promise.resolve())));
      if (owns) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForMetaLeader(httpPorts: number[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const port of httpPorts) {
      try {
        const jsz = (await (await fetch(`http://127.0.0.1:${port}/jsz`)).json()) as { meta_cluster?: { leader?: string } };
        if (httpPorts.length === 1 || jsz.meta_cluster?.leader) return;
      } catch {
        // not answering yet
      }
    }
    if (Date.now() > deadline) throw new Error(`no JetStream meta leader was elected within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
