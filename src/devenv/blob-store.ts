/**
 * A real Azure-compatible blob store (Azurite, installed from the npm registry by
 * hack/install-azurite.sh into the cache) for the vendorB artifact tests. It listens on loopback
 * with one account of a fresh random name and key, and keeps its data in a directory of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './control-plane.js';
import { startServerProcess, toolPath } from './server-process.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface BlobStore {
  /** The account's endpoint: http://host:port/ACCOUNT */
  endpoint: string;
  account: string;
  accountKey: string;
  stop(): Promise<void>;
}

export async function startBlobStore(opts: { log?: (line: string) => void } = {}): Promise<BlobStore> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  const main = await toolPath([join(REPO_ROOT, 'hack', 'install-azurite.sh')], 'installing Azurite', log);
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-azurite-'));
  const port = await freePort();
  const account = `plugflow${randomBytes(3).toString('hex')}`;
  const accountKey = randomBytes(32).toString('base64');
  const endpoint = `http://127.0.0.1:${port}/${account}`;
  const server = await startServerProcess({
    name: `Azurite at ${endpoint}`,
    file: process.execPath,
    args: [
      main,
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      String(port),
      '--location',
      dir,
      '--silent',
      '--skipApiVersionCheck',
      '--disableProductStyleUrl',
      '--disableTelemetry',
    ],
    env: { PATH: process.env.PATH ?? '', HOME: dir, AZURITE_ACCOUNTS: `${account}:${accountKey}` },
    // Any HTTP answer means it listens (an unsigned request is refused, which is fine here).
    ready: async () => (await fetch(`${endpoint}?comp=list`)).status > 0,
  });
  log(`[blob-store] Azurite ready at ${endpoint} in ${Date.now() - t0} ms (data in ${dir})`);
  return {
    endpoint,
    account,
    accountKey,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
