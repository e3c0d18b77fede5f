/**
 * The local runner ignores images, so `plugflow` (the command of a step pod's init and wait
 * containers) must resolve to this repository's CLI. The runner writes `<dir>/bin/plugflow`,
 * a shell script that runs the CLI, and puts `<dir>/bin` first on every container's PATH. It
 * also copies the emissary there and exports PLUGFLOW_EMISSARY, which is what the plugflow
 * image provides on a real node.
 *
 * The CLI is run from the TypeScript sources through tsx when they are present (a checkout):
 * they are always current, while dist/ may be stale or missing. Without sources (an installed
 * package) it runs dist/cli/main.js. PLUGFLOW_RUNNER_CLI=dist|tsx forces one. `plugflow
 * executor …` goes to the small executor entry point (src/cli/executor-main.ts), which starts
 * in well under a second where the full CLI takes several.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quote } from './launch.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ShimOptions {
  /** Directory to write `plugflow` and `emissary` into. */
  binDir: string;
  /** The emissary built from emissary/. */
  emissary: string;
  /** How the containers see binDir (the stage path inside mount namespaces). */
  binDirInside: string;
  mode?: 'tsx' | 'dist';
}

/** How the shim starts an entry point (`main` or `executor-main`): the argv before the user's arguments. */
export function cliCommand(entry: 'main' | 'executor-main' = 'main', mode = process.env.PLUGFLOW_RUNNER_CLI): string[] {
  const tsxLoader = join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const source = join(REPO_ROOT, 'src', 'cli', `${entry}.ts`);
  const dist = join(REPO_ROOT, 'dist', 'cli', `${entry}.js`);
  const useTsx = mode === 'tsx' || (mode !== 'dist' && existsSync(source) && existsSync(tsxLoader));
  if (useTsx) return [process.execPath, '--import', tsxLoader, source];
  if (!existsSync(dist)) throw new Error(`${dist} is missing; run "npm run build" (or keep the sources and tsx for the runner to use)`);
  return [process.execPath, dist];
}

export function writeShim(opts: ShimOptions): string {
  mkdirSync(opts.binDir, { recursive: true });
  const emissary = join(opts.binDir, 'emissary');
  const tmp = `${emissary}.tmp-${process.pid}`;
  copyFileSync(opts.emissary, tmp);
  chmodSync(tmp, 0o755);
  renameSync(tmp, emissary);
  const cli = (entry: 'main' | 'executor-main') => cliCommand(entry, opts.mode).map(quote).join(' ');
  const script = [
    '#!/bin/sh',
    '# Written by the plugflow local pod runner: stands in for the plugflow image.',
    `PLUGFLOW_EMISSARY=${quote(join(opts.binDirInside, 'emissary'))}`,
    'export PLUGFLOW_EMISSARY',
    `[ "$1" = executor ] && exec ${cli('executor-main')} "$@"`,
    `exec ${cli('main')} "$@"`,
    '',
  ].join('\n');
  const shim = join(opts.binDir, 'plugflow');
  writeFileSync(`${shim}.tmp`, script, { mode: 0o755 });
  renameSync(`${shim}.tmp`, shim);
  return shim;
}
