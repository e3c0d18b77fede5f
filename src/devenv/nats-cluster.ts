/**
 * A local NATS JetStream cluster (nats-server, built from the Go module proxy by
 * hack/build-store-server.sh into the cache) for `plugflow dev --event-bus`, the event bus
 * tests and the bench: `nodes` servers on loopback, routed into one cluster, each with its own
 * store directory, so a replicated stream survives one of them being SIGKILLed. Start-up is timed
 * and a node that does not come up is named with the end of its output.
 *
 * Secured as the manifests' bus is (manifests/event-bus/): clients must speak TLS and log in as
 * the one user of the PLUGFLOW account (no anonymous user, so a connection without credentials
 * is refused), with a password generated for the run and handed to the node through its
 * environment, never on its command line; the routes between nodes are TLS whose peers must
 * present a certificate of the run's own CA. `connection` is what a plugflow server is given.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { DEFAULT_BUS_USER, type BusConnection } from '../server/event-bus-connection.js';
import { createCertificateAuthority, issueCertificate } from '../tls/certificate-authority.js';
import { freePort } from './control-plane.js';
import { startServerProcess, toolPath, type ServerProcess } from './server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface NatsCluster {
  /** Client URLs, one per node: `nats://127.0.0.1:PORT`. */
  servers: string[];
  /** What a server connects with: the URLs, the user and password, the CA of the nodes' certificates. */
  connection: BusConnection & { credentials: { user: string; password: string }; ca: string };
  /**
   * `plugflow server`'s flags for this bus (`--event-bus`, `--event-bus-password-file`,
   * `--event-bus-ca-file`), the password and CA written into `dir` (the password file 0600).
   */
  serverFlags(dir: string): string[];
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
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`);
  const password = randomBytes(24).toString('base64url');
  const tls = await nodeCertificates(dir);
  const config = (i: number) => {
    const p = ports[i]!;
    const store = join(dir, `node-${i}`);
    mkdirSync(store, { recursive: true });
    const file = join(dir, `node-${i}.conf`);
    writeFileSync(file, nodeConfig({ name: `plugflow-nats-${i}`, ports: p, store, tls, routes: n === 1 ? undefined : routes }), {
      mode: 0o600,
    });
    return file;
  };
  const start = (i: number) =>
    startServerProcess({
      name: `nats-server node ${i} (client port ${ports[i]!.client})`,
      file: bin,
      args: ['-c', config(i)],
      // The password reaches the node through its environment (the config names the variable).
      env: { PATH: process.env.PATH ?? '', HOME: dir, [PASSWORD_ENV]: password },
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
    connection: { servers, credentials: { user: DEFAULT_BUS_USER, password }, ca: tls.ca },
    serverFlags: (into) => {
      const passwordFile = join(into, 'event-bus-password');
      writeFileSync(passwordFile, password, { mode: 0o600 });
      return ['--event-bus', servers.join(','), '--event-bus-password-file', passwordFile, '--event-bus-ca-file', tls.caFile];
    },
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

/** The environment variable a node's config reads the bus user's password from. */
const PASSWORD_ENV = 'PLUGFLOW_BUS_PASSWORD';

interface NodeTls {
  ca: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA for the run and one certificate (loopback names) every node uses for clients and routes. */
async function nodeCertificates(dir: string): Promise<NodeTls> {
  const ca = await createCertificateAuthority('plugflow-dev-event-bus-ca');
  const leaf = await issueCertificate(ca, { commonName: 'plugflow-nats', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  const files = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'node.pem'), keyFile: join(dir, 'node-key.pem') };
  mkdirSync(dir, { recursive: true });
  writeFileSync(files.caFile, ca.cert);
  writeFileSync(files.certFile, leaf.cert);
  writeFileSync(files.keyFile, leaf.key, { mode: 0o600 });
  return { ca: ca.cert, ...files };
}

/**
 * One node's nats-server config: TLS for clients, one account with JetStream and one user whose
 * password is read from the environment, monitoring on loopback, and (in a cluster) routes over
 * TLS that verify the peer's certificate.
 */
export function nodeConfig(o: {
  name: string;
  ports: { client: number; route: number; http: number };
  store: string;
  tls: Omit<NodeTls, 'ca'>;
  routes?: string[];
}): string {
  const q = (v: string) => JSON.stringify(v);
  const tls = (verify: boolean) =>
    `tls {\n    cert_file: ${q(o.tls.certFile)}\n    key_file: ${q(o.tls.keyFile)}\n    ca_file: ${q(o.tls.caFile)}\n    verify: ${verify}\n    timeout: 5\n  }`;
  const cluster = o.routes
    ? `cluster {\n  name: plugflow\n  listen: "127.0.0.1:${o.ports.route}"\n  routes: [${o.routes.map(q).join(', ')}]\n  ${tls(true)}\n}\n`
    : '';
  return `server_name: ${q(o.name)}
listen: "127.0.0.1:${o.ports.client}"
http: "127.0.0.1:${o.ports.http}"
jetstream { store_dir: ${q(o.store)} }
${tls(false).replace(/^ {2}/gm, '')}
accounts {
  PLUGFLOW {
    jetstream: enabled
    users: [ { user: ${q(DEFAULT_BUS_USER)}, password: $${PASSWORD_ENV} } ]
  }
}
${cluster}`;
}
