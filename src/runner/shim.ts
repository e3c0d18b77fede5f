/**
 * The local runner ignores images, so `plugflow` (the command of step pods' init and wait
 * containers and of agent pods) must resolve to this package's CLI in every container, whatever
 * user it runs as and whatever its mount namespace hides. The runner writes `<dir>/_bin/plugflow`,
 * a shell script that runs the CLI, and puts that directory first on every container's PATH. It
 * also copies the emissary there and exports PLUGFLOW_EMISSARY, which is what the plugflow image
 * provides on a real node.
 *
 * Where the CLI is: a checkout may sit where a container cannot reach it, under a home directory
 * only its owner may enter (`/root` is 0700) or under /tmp, which every container gets privately.
 * So with mount namespaces the runner bind-mounts the package read-only at CLI_DIR in every
 * container (launch.ts `binds`) and the shim runs it from there; without namespaces containers
 * run as the runner's user in its filesystem, and the shim runs the package where it is. The
 * same holds for node itself when only root may execute it where it is (e.g. under ~/.nvm).
 *
 * It runs the compiled CLI (bin/plugflow.js, which loads dist/ and sends `plugflow executor …`
 * to its small entry point), as the plugflow image does: no TypeScript loader, which is a
 * development dependency and would keep its transform cache in each container's private /tmp.
 * `make build` (which `make dev` and the tests run first) keeps dist/ current.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quote } from './launch.js';
import { reachableByOthers } from './user-path.js';

/** The plugflow package this code runs from (a checkout, or an installed package). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where containers see the plugflow package when they have mount namespaces. */
export const CLI_DIR = '/run/plugflow-runner-cli';
/** Where containers see node when other users may not execute it at its own path. */
export const NODE_IN_PODS = '/run/plugflow-runner-node';

export interface ShimOptions {
  /** Directory to write `plugflow` and `emissary` into. */
  binDir: string;
  /** The emissary built from emissary/. */
  emissary: string;
  /** How the containers see binDir (the stage path inside mount namespaces). */
  binDirInside: string;
  /** How the containers see the plugflow package (CLI_DIR, or REPO_ROOT without namespaces). */
  packageInside: string;
  /** How the containers see node. */
  nodeInside: string;
}

/** How a host process (not a container) starts an entry point: tsx from src/ in a checkout, else dist/. */
export function cliCommand(entry: 'main' | 'pod-side-main' = 'main', mode = process.env.PLUGFLOW_RUNNER_CLI): string[] {
  const tsxLoader = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const source = join(REPO_ROOT, 'src', 'cli', `${entry}.ts`);
  const dist = join(REPO_ROOT, 'dist', 'cli', `${entry}.js`);
  const useTsx = mode === 'tsx' || (mode !== 'dist' && existsSync(source) && existsSync(tsxLoader));
  if (useTsx) return [process.execPath, '--import', tsxLoader, source];
  if (!existsSync(dist)) throw new Error(`${dist} is missing; run "npm run build" (or keep the sources and tsx for the runner to use)`);
  return [process.execPath, dist];
}

/** Whether users other than the owner may execute the file at its path (every directory on the way searchable). */
export function executableByOthers(file: string, stat: (p: string) => { mode: number } = statSync): boolean {
  try {
    return reachableByOthers(dirname(file), stat) && (stat(file).mode & 0o001) !== 0;
  } catch {
    return false;
  }
}

/**
 * Why a container running as another user could not read the package even through its bind
 * mount (files not readable by others, e.g. a clone made under umask 077), or undefined.
 */
export function unreadablePackage(root: string = REPO_ROOT, stat: (p: string) => { mode: number } = statSync): string | undefined {
  const need: Array<[string, number]> = [
    [root, 0o005],
    [join(root, 'bin'), 0o005],
    [join(root, 'bin', 'plugflow.js'), 0o004],
    [join(root, 'dist'), 0o005],
    [join(root, 'node_modules'), 0o005],
  ];
  for (const [path, bits] of need) {
    let mode: number;
    try {
      mode = stat(path).mode;
    } catch {
      continue;
    }
    if ((mode & bits) !== bits) return `${path} has mode ${(mode & 0o777).toString(8).padStart(4, '0')}`;
  }
  return undefined;
}

export function writeShim(opts: ShimOptions): string {
  // Explicit modes: a umask of 077 would leave them to root alone.
  mkdirSync(opts.binDir, { recursive: true });
  chmodSync(opts.binDir, 0o755);
  const emissary = join(opts.binDir, 'emissary');
  const tmp = `${emissary}.tmp-${process.pid}`;
  copyFileSync(opts.emissary, tmp);
  chmodSync(tmp, 0o755);
  renameSync(tmp, emissary);
  const script = [
    '#!/bin/sh',
    '# Written by the plugflow local pod runner: stands in for the plugflow image.',
    `PLUGFLOW_EMISSARY=${quote(join(opts.binDirInside, 'emissary'))}`,
    'export PLUGFLOW_EMISSARY',
    `exec ${quote(opts.nodeInside)} ${quote(join(opts.packageInside, 'bin', 'plugflow.js'))} "$@"`,
    '',
  ].join('\n');
  const shim = join(opts.binDir, 'plugflow');
  writeFileSync(`${shim}.tmp`, script);
  chmodSync(`${shim}.tmp`, 0o755);
  renameSync(`${shim}.tmp`, shim);
  return shim;
}
