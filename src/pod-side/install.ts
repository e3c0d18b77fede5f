/**
 * `plugflow executor install DIR`: the step pod's init container copies the emissary binary
 * into the shared volume, so that the main container and the sidecars (which run arbitrary
 * user images) can start it. The binary comes from PLUGFLOW_EMISSARY, else from its place in
 * the plugflow image; the local pod runner points PLUGFLOW_EMISSARY at the one it built.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_EMISSARY_SOURCE, ENV_EMISSARY } from '../pods/layout.js';

export function installEmissary(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const source = env[ENV_EMISSARY] || DEFAULT_EMISSARY_SOURCE;
  if (!existsSync(source)) {
    throw new Error(`the emissary binary ${source} does not exist (set ${ENV_EMISSARY} to its path, or use the plugflow image)`);
  }
  mkdirSync(dir, { recursive: true });
  const target = join(dir, 'emissary');
  // Copy then rename: a container that starts early never sees a half-written binary.
  const tmp = `${target}.tmp-${process.pid}`;
  copyFileSync(source, tmp);
  chmodSync(tmp, 0o755);
  renameSync(tmp, target);
  return target;
}
