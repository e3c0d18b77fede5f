/**
 * The README's first command (`make dev`: a local control plane, the pod runner, the sample
 * workflow and the hello plugin workflow) from checkouts where pods used to fail: under a
 * home-like directory only its owner may enter (mode 0700, as /root is), where the agent pod's
 * non-root containers could not load the CLI; and under /tmp, which every container gets
 * privately, in a path with a space. Both workflows must end Succeeded.
 *
 * The checkout is made cheaply from this one: its tracked and untracked-but-not-ignored files
 * (so uncommitted changes are what is tested), node_modules as hard links (a copy across
 * file systems) and the dist/ that the test run built. `make dev` runs with its deps and build
 * steps marked done (`make -o deps -o build`). Everything it made is removed afterwards.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, type Dirent } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/runner/shim.js';
import { agentSlot } from './support/e2e.js';

/** The hello plugin's port: the dev run's agent pod shares the host's loopback with other suites' agent pods. */
const HELLO_PORT = 4355;

function seconds(t0: number): string {
  return `${((Date.now() - t0) / 1000).toFixed(1)}s`;
}

/** Copies this checkout to `dest` (see the file comment); returns what it did. */
function makeCheckout(dest: string): void {
  const t0 = Date.now();
  let files: string[];
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .split('\0')
      .filter(Boolean);
  } catch {
    // Not a git checkout (an unpacked archive): everything but what is built or installed.
    const skip = new Set(['.git', 'node_modules', 'dist', '.plugflow']);
    files = (readdirSync(REPO_ROOT, { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((e) => e.isFile())
      .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)))
      .filter((f) => !skip.has(f.split('/')[0]!));
  }
  let copied = 0;
  for (const f of files) {
    const src = join(REPO_ROOT, f);
    if (!existsSync(src)) continue; // deleted in the working tree
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    cpSync(src, join(dest, f), { preserveTimestamps: true });
    copied++;
  }
  if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')))
    throw new Error(`${REPO_ROOT}/dist is missing: run "make build" first (kt and make test do)`);
  cpSync(join(REPO_ROOT, 'dist'), join(dest, 'dist'), { recursive: true, preserveTimestamps: true });
  let how = 'hard links';
  try {
    execFileSync('cp', ['-al', join(REPO_ROOT, 'node_modules'), join(dest, 'node_modules')], { stdio: 'pipe' });
  } catch {
    rmSync(join(dest, 'node_modules'), { recursive: true, force: true });
    execFileSync('cp', ['-a', join(REPO_ROOT, 'node_modules'), join(dest, 'node_modules')], { stdio: 'pipe' });
    how = 'a copy';
  }
  console.log(`[checkout] ${dest}: ${copied} files, dist/, node_modules as ${how} in ${seconds(t0)}`);
}

/** Runs `make dev` with DEV_FLAGS=--exit in the checkout; resolves with its exit code and output. */
function makeDev(checkout: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('make', ['-o', 'deps', '-o', 'build', 'dev', 'DEV_FLAGS=--exit --port 0 --timeout 150'], {
      cwd: checkout,
      env: { ...process.env, PLUGFLOW_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 240_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function readmeFlowFrom(checkout: string): Promise<void> {
  makeCheckout(checkout);
  const release = await agentSlot([HELLO_PORT], 300_000);
  const t0 = Date.now();
  let result;
  try {
    result = await makeDev(checkout);
  } finally {
    release();
  }
  const statuses = [...result.output.matchAll(/^Status:\s+(\S+)/gm)].map((m) => m[1]);
  console.log(`[checkout] make dev in ${checkout}: exit ${result.code}, workflows ${statuses.join(', ')} in ${seconds(t0)}`);
  const lines = result.output.split('\n').filter((l) => !l.startsWith('{'));
  expect({ code: result.code, statuses }, lines.slice(-60).join('\n')).toEqual({
    code: 0,
    statuses: ['Succeeded', 'Succeeded', 'Succeeded'],
  });
}

describe('make dev from wherever the checkout is', () => {
  it('under a home-like directory only its owner may enter (0700)', async () => {
    // Beside the control-plane cache in the home directory (/root itself is 0700 for root).
    const cache = process.env.PLUGFLOW_CACHE || join(homedir(), '.cache', 'plugflow');
    mkdirSync(cache, { recursive: true });
    const home = mkdtempSync(join(cache, 'checkout-test-'));
    chmodSync(home, 0o700);
    try {
      await readmeFlowFrom(join(home, 'plugflow'));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 420_000);

  it('under /tmp, in a path with a space', async () => {
    const base = mkdtempSync(join(tmpdir(), 'plugflow-checkout-test-'));
    try {
      await readmeFlowFrom(join(base, 'my checkout', 'plugflow'));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 420_000);
});
