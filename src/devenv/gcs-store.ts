/**
 * A GCS-compatible object store (fake-gcs-server, built from the Go module proxy by
 * hack/build-store-server.sh into the cache) for the vendorCObject artifact tests. It listens on
 * loopback over plain http and keeps its data in a directory of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './control-plane.js';
import { startServerProcess, toolPath } from './server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface GcsStore {
  /** http://host:port — what PLUGFLOW_GCS_ENDPOINT is set to. */
  endpoint: string;
  stop(): Promise<void>;
}

export async function startGcsStore(opts: { log?: (line: string) => void } = {}): Promise<GcsStore> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const bin = await toolPath([join(REPO_ROOT, 'hack', 'build-store-server.sh'), 'fake-gcs-server'], 'building fake-gcs-server', log);
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-fake-gcs-'));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const server = await startServerProcess({
    name: `fake-gcs-server at ${endpoint}`,
    file: bin,
    args: [
      '-scheme',
      'http',
      '-host',
      '127.0.0.1',
      '-port',
      String(port),
      '-backend',
      'filesystem',
      '-filesystem-root',
      dir,
      '-external-url',
      endpoint,
      '-public-host',
      `127.0.0.1:${port}`,
      '-log-level',
      'warn',
    ],
    env: { PATH: process.env.PATH ?? '', HOME: dir },
    ready: async () => (await fetch(`${endpoint}/storage/v1/b`)).ok,
  });
  log(`[gcs-store] fake-gcs-server ready at ${endpoint} in ${Date.now() - t0} ms (data in ${dir})`);
  return {
    endpoint,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
