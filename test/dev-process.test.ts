/**
 * `plugflow dev`'s processes die with it, and a new one cleans up after one that was killed.
 * A dev run's etcd used to outlive a killed (or stuck while stopping) dev and keep its data
 * directory; now its children get a parent-death signal, its control-plane directory names
 * them (an owner file), and the next run in that directory kills what is left and removes the
 * stale data, saying so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER_FILE, readOwnerFile, recordProcess, stillRunning, type RecordedProcess } from '../src/devenv/leftovers.js';
import { pdeathsigTool } from '../src/runner/parent-death.js';
import { REPO_ROOT } from '../src/runner/shim.js';

const dir = mkdtempSync(join(tmpdir(), 'plugflow-dev-process-'));
const cpDir = join(dir, 'control-plane');
const started: ChildProcess[] = [];

afterAll(() => {
  for (const c of started) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `plugflow dev --dir DIR` (no sample workflows) and resolves once it is up, with its output so far. */
function startDev(): Promise<{ dev: ChildProcess; output: () => string }> {
  const dev = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'plugflow.js'), 'dev', '--dir', dir, '--port', '0'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PLUGFLOW_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(dev);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`plugflow dev did not come up in 180s:\n${out.slice(-3000)}`)), 180_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('[dev] running; press Ctrl-C to stop')) {
        clearTimeout(timer);
        resolve({ dev, output: () => out });
      }
    };
    dev.stdout!.on('data', onData);
    dev.stderr!.on('data', onData);
    dev.once('exit', (code) => reject(new Error(`plugflow dev exited with ${code} while starting:\n${out.slice(-3000)}`)));
  });
}

async function until(check: () => boolean, ms: number): Promise<number | undefined> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (check()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check() ? Date.now() - t0 : undefined;
}

describe('plugflow dev processes', () => {
  let killedOwner: RecordedProcess;

  it('a SIGKILLed dev takes etcd, kube-apiserver and kube-controller-manager with it', async (ctx) => {
    if (!pdeathsigTool()) {
      console.log('skipping: setpriv --pdeathsig (util-linux 2.33+) is not available, so only a dev that exits kills its children');
      ctx.skip();
    }
    const { dev } = await startDev();
    const record = readOwnerFile(cpDir);
    expect(record?.owner.pid).toBe(dev.pid);
    expect(record?.children.map((c) => c.name).sort()).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager']);
    expect(record!.children.every(stillRunning)).toBe(true);
    killedOwner = record!.owner;
    dev.kill('SIGKILL');
    const took = await until(() => !record!.children.some(stillRunning), 5000);
    console.log(`[dev-process] children of the SIGKILLed dev gone after ${took} ms`);
    expect(
      took,
      `still running: ${record!.children
        .filter(stillRunning)
        .map((c) => `${c.name} ${c.pid}`)
        .join(', ')}`,
    ).toBeDefined();
    // The killed run could not clean up: its record stays for the next one.
    expect(existsSync(join(cpDir, OWNER_FILE))).toBe(true);
  }, 240_000);

  it('the next dev in that directory kills what a killed one left running and removes its stale data, saying so', async () => {
    // As a dev killed where no parent-death signal exists leaves it: its owner gone, an "etcd"
    // still running, its data in place.
    mkdirSync(cpDir, { recursive: true });
    const leftover = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
    started.push(leftover);
    const etcd = recordProcess('etcd', leftover.pid!);
    const owner = killedOwner ?? { name: 'owner', pid: 2 ** 22 + 1 };
    writeFileSync(join(cpDir, OWNER_FILE), JSON.stringify({ owner, children: [etcd] }));
    writeFileSync(join(cpDir, 'stale-marker'), 'from the killed run');

    const { dev, output } = await startDev();
    expect(output()).toContain(
      `cleaned up after a run that did not stop (pid ${owner.pid}): killed etcd (pid ${etcd.pid}); removed its data`,
    );
    expect(stillRunning(etcd)).toBe(false);
    expect(existsSync(join(cpDir, 'stale-marker'))).toBe(false);
    const record = readOwnerFile(cpDir)!;
    expect(record.owner.pid).toBe(dev.pid);

    // A clean stop leaves nothing running and no record.
    const exited = new Promise<number | null>((r) => dev.once('exit', (code) => r(code)));
    dev.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(record.children.filter(stillRunning)).toEqual([]);
    expect(existsSync(join(cpDir, OWNER_FILE))).toBe(false);
  }, 240_000);
});
