/**
 * A real S3-compatible object store (MinIO, built from the Go module proxy by
 * hack/build-store-server.sh into the cache) for the artifact tests and `plugflow dev`. It listens on
 * loopback with fresh random credentials and keeps its data in a directory of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './control-plane.js';
import { startServerProcess, toolPath } from './server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ObjectStore {
  /** host:port (plain http). */
  endpoint: string;
  /** http://host:port */
  url: string;
  accessKey: string;
  secretKey: string;
  stop(): Promise<void>;
}

/** Builds MinIO if needed and returns the binary's path. */
export function ensureMinioBinary(log: (line: string) => void = () => {}): Promise<string> {
  return toolPath([join(REPO_ROOT, 'hack', 'build-store-server.sh'), 'minio'], 'building MinIO', log);
}

export interface ObjectStoreOptions {
  /** Data directory (default: a fresh temporary one, removed on stop). */
  dir?: string;
  log?: (line: string) => void;
  /** Address to listen on (default 127.0.0.1). A real node's pods need the host's address. */
  host?: string;
}

export async function startObjectStore(opts: ObjectStoreOptions = {}): Promise<ObjectStore> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = await ensureMinioBinary(log);
  const owns = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'plugflow-minio-'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  const host = opts.host ?? '127.0.0.1';
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKey = `plugflow${randomBytes(4).toString('hex')}`;
  const secretKey = randomBytes(20).toString('hex');
  const url = `http://${host}:${port}`;
  const server = await startServerProcess({
    name: `MinIO at ${url}`,
    file: bin,
    args: ['server', join(dir, 'data'), '--address', `${host}:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      MINIO_ROOT_USER: accessKey,
      MINIO_ROOT_PASSWORD: secretKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
    },
    ready: async () => (await fetch(`${url}/minio/health/ready`)).ok,
  });
  log(`[object-store] MinIO ready at ${url} in ${Date.now() - t0} ms (data in ${dir})`);
  return {
    endpoint: `${host}:${port}`,
    url,
    accessKey,
    secretKey,
    stop: async () => {
      await server.stop();
      if (owns) rmSync(dir, { recursive: true, force: true });
    },
  };
}
