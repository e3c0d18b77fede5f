/**
 * The pod side of artifact driver plugins: a gRPC client of the ArtifactService a driver serves
 * on its unix socket (proto/artifact.proto, the peer's protocol, so drivers written for the peer
 * work). The controller runs each driver a step uses as a sidecar of the step pod (pods/
 * artifact-drivers.ts); the init container asks it to Load inputs, the wait container to Save
 * outputs. Both sides see the driver's socket directory at the same path
 * (/tmp/artifact-plugins/<name>), and the files the driver reads or writes travel through it:
 * a driver's `path` must mean the same file in its container as in plugflow's.
 *
 * The socket may appear late (the driver is still starting): it is waited for up to
 * SOCKET_WAIT_MS, then the connection must be ready within the artifact's (or the driver's)
 * connection timeout, 5 s by default, as in the peer. Saving streams the file (SaveStream) when
 * the driver says it can (GetCapabilities), else copies it into the socket directory for Save.
 * Errors name the driver and the call; the caller names the artifact.
 */
import { copyFileSync, cpSync, createReadStream, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as grpc from '@grpc/grpc-js';

/** Where an artifact lives in a driver's store (a plan's location; the record's `plugin`). */
export interface PluginLocation {
  kind: 'plugin';
  name: string;
  configuration: string;
  key: string;
  connectionTimeoutSeconds?: number;
}

/** The artifact fields a driver is told besides its location (the record's). */
export interface PluginArtifactInfo {
  name: string;
  path?: string;
  mode?: number;
  optional?: boolean;
  recurseMode?: boolean;
}

export class PluginDriverError extends Error {}

/** The directory of every driver's socket and exchanged files, in the driver and in plugflow's containers. */
export const PLUGIN_SOCKET_ROOT = '/tmp/artifact-plugins';
export const DEFAULT_CONNECTION_TIMEOUT_S = 5;
/** How long a socket that does not exist yet is waited for (a driver image being pulled and started). */
export const SOCKET_WAIT_MS = 120_000;
const CHUNK = 1024 * 1024;

export function socketDir(name: string, root = PLUGIN_SOCKET_ROOT): string {
  return `${root}/${name}`;
}

export function socketPath(name: string, root = PLUGIN_SOCKET_ROOT): string {
  return `${socketDir(name, root)}/socket`;
}

/** proto/artifact.proto, from src/artifacts or dist/artifacts alike. */
export const PROTO_FILE = fileURLToPath(new URL('../../proto/artifact.proto', import.meta.url));

type Unary = (req: unknown, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void;
interface ServiceClient extends grpc.Client {
  [method: string]: unknown;
}

/** The ArtifactService client class, loaded once. */
let serviceClass: Promise<new (address: string, creds: grpc.ChannelCredentials) => ServiceClient> | undefined;
function loadService() {
  serviceClass ??= (async () => {
    const grpcJs = await import('@grpc/grpc-js');
    const loader = await import('@grpc/proto-loader');
    const def = await loader.load(PROTO_FILE, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const pkg = grpcJs.loadPackageDefinition(def) as unknown as { artifact: { ArtifactService: unknown } };
    return pkg.artifact.ArtifactService as new (address: string, creds: grpc.ChannelCredentials) => ServiceClient;
  })();
  return serviceClass;
}

/** A connection to one driver. */
export class PluginDriver {
  private constructor(
    readonly name: string,
    readonly dir: string,
    private readonly client: ServiceClient,
  ) {}

  /** Waits for the socket, then for a ready connection. */
  static async connect(name: string, timeoutSeconds = DEFAULT_CONNECTION_TIMEOUT_S, root = PLUGIN_SOCKET_ROOT): Promise<PluginDriver> {
    const socket = socketPath(name, root);
    const until = Date.now() + SOCKET_WAIT_MS;
    while (!existsSync(socket)) {
      if (Date.now() > until)
        throw new PluginDriverError(
          `artifact driver "${name}": its socket ${socket} did not appear within ${SOCKET_WAIT_MS / 1000}s (did the driver container start? see its log)`,
        );
      await sleep(200);
    }
    const grpcJs = await import('@grpc/grpc-js');
    const Service = await loadService();
    const client = new Service(`unix://${socket}`, grpcJs.credentials.createInsecure());
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(Date.now() + timeoutSeconds * 1000, (err) =>
        err
          ? reject(new PluginDriverError(`artifact driver "${name}": no connection on ${socket} within ${timeoutSeconds}s: ${err.message}`))
          : resolve(),
      ),
    );
    return new PluginDriver(name, socketDir(name, root), client);
  }

  close(): void {
    this.client.close();
  }

  /** Loads the artifact into `dest` (a path of plugflow's own volume), through the socket directory. */
  async load(loc: PluginLocation, info: PluginArtifactInfo, dest: string): Promise<void> {
    const exchange = join(this.dir, `load-${info.name}`);
    rmSync(exchange, { recursive: true, force: true });
    try {
      const res = await this.call('Load', { input_artifact: grpcArtifact(loc, info), path: exchange });
      if (!res.success) throw new PluginDriverError(`artifact driver "${this.name}": Load failed: ${text(res.error)}`);
      if (!existsSync(exchange))
        throw new PluginDriverError(`artifact driver "${this.name}": Load succeeded but wrote nothing at ${exchange}`);
      cpSync(exchange, dest, { recursive: true });
    } finally {
      rmSync(exchange, { recursive: true, force: true });
    }
  }

  /** Saves the file or directory `packed`: streamed when the driver can take a stream, else through the socket directory. */
  async save(loc: PluginLocation, info: PluginArtifactInfo, packed: string): Promise<'stream' | 'file'> {
    const artifact = grpcArtifact(loc, info);
    if (statSync(packed).isFile() && (await this.streams())) {
      const res = await this.saveStream(artifact, packed);
      if (!res.success) throw new PluginDriverError(`artifact driver "${this.name}": SaveStream failed: ${text(res.error)}`);
      return 'stream';
    }
    const exchange = join(this.dir, `save-${info.name}`);
    rmSync(exchange, { recursive: true, force: true });
    try {
      if (statSync(packed).isDirectory()) cpSync(packed, exchange, { recursive: true });
      else copyFileSync(packed, exchange);
      const res = await this.call('Save', { path: exchange, output_artifact: artifact });
      if (!res.success) throw new PluginDriverError(`artifact driver "${this.name}": Save failed: ${text(res.error)}`);
      return 'file';
    } finally {
      rmSync(exchange, { recursive: true, force: true });
    }
  }

  /** Deletes the artifact from the driver's store (artifact GC). */
  async delete(loc: PluginLocation, name: string): Promise<void> {
    const res = await this.call('Delete', { artifact: grpcArtifact(loc, { name }) });
    if (!res.success) throw new PluginDriverError(`artifact driver "${this.name}": Delete failed: ${text(res.error)}`);
  }

  /** Whether the driver implements SaveStream; one without GetCapabilities does not. */
  private async streams(): Promise<boolean> {
    try {
      return (await this.call('GetCapabilities', {})).supports_save_stream === true;
    } catch (err) {
      if ((err as { grpcCode?: number }).grpcCode === 12) return false; // UNIMPLEMENTED
      throw err;
    }
  }

  private saveStream(artifact: Record<string, unknown>, file: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const fn = this.client.SaveStream as (
        cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void,
      ) => grpc.ClientWritableStream<unknown>;
      const call = fn.call(this.client, (err, res) => (err ? reject(this.failure('SaveStream', err)) : resolve(res)));
      call.write({ output_artifact: artifact });
      const body = createReadStream(file, { highWaterMark: CHUNK });
      body.on('data', (chunk) => {
        if (!call.write({ chunk })) {
          body.pause();
          call.once('drain', () => body.resume());
        }
      });
      body.on('end', () => call.end());
      body.on('error', (err) => {
        call.cancel();
        reject(new PluginDriverError(`artifact driver "${this.name}": reading ${file}: ${err.message}`));
      });
    });
  }

  private call(method: string, req: unknown): Promise<Record<string, unknown>> {
    const fn = this.client[method] as Unary;
    return new Promise((resolve, reject) =>
      fn.call(this.client, req, (err, res) => (err ? reject(this.failure(method, err)) : resolve(res))),
    );
  }

  private failure(method: string, err: grpc.ServiceError): PluginDriverError {
    const out = new PluginDriverError(`artifact driver "${this.name}": ${method}: ${err.details || err.message}`);
    (out as { grpcCode?: number }).grpcCode = err.code;
    return out;
  }
}

/** The protocol's Artifact message (snake_case fields, as proto/artifact.proto names them). */
function grpcArtifact(loc: PluginLocation, info: PluginArtifactInfo): Record<string, unknown> {
  return {
    name: info.name,
    path: info.path ?? '',
    mode: info.mode ?? 0,
    optional: info.optional ?? false,
    recurse_mode: info.recurseMode ?? false,
    plugin: {
      name: loc.name,
      configuration: loc.configuration,
      key: loc.key,
      connection_timeout_seconds: loc.connectionTimeoutSeconds ?? 0,
    },
  };
}

function text(v: unknown): string {
  return typeof v === 'string' && v !== '' ? v : '(the driver gave no reason)';
}

/** One connection per driver for a container's run, opened on first use. */
export class DriverPool {
  private readonly open = new Map<string, Promise<PluginDriver>>();

  /** `root`: where the sockets are (the pod's /tmp/artifact-plugins; tests give another). */
  constructor(private readonly root = PLUGIN_SOCKET_ROOT) {}

  get(loc: PluginLocation): Promise<PluginDriver> {
    let d = this.open.get(loc.name);
    if (!d) {
      d = PluginDriver.connect(loc.name, loc.connectionTimeoutSeconds ?? DEFAULT_CONNECTION_TIMEOUT_S, this.root);
      this.open.set(loc.name, d);
      d.catch(() => this.open.delete(loc.name));
    }
    return d;
  }

  async close(): Promise<void> {
    for (const d of this.open.values()) (await d.catch(() => undefined))?.close();
    this.open.clear();
  }
}

/** PLUGFLOW_ARTIFACT_PLUGINS_DIR: another place of the sockets than /tmp/artifact-plugins (tests only). */
export function pluginRootFromEnv(env: NodeJS.ProcessEnv): string {
  return env.PLUGFLOW_ARTIFACT_PLUGINS_DIR || PLUGIN_SOCKET_ROOT;
}
