import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OWNER_FILE, processStartTime, reapDir, reapLeftovers, recordProcess, stillRunning, writeOwnerFile } from './leftovers.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

function sleeper(): number {
  const child = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
  child.unref();
  started.push(child.pid!);
  return child.pid!;
}

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  return Number(spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim());
}

function ownerFile(
  dir: string,
  owner: { pid: number; start?: string },
  children: Array<{ name: string; pid: number; start?: string }>,
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify({ owner: { name: 'owner', ...owner }, children }));
}

describe('leftovers of killed runs', () => {
  it.runIf(process.platform === 'linux')('names processes by pid and start time', () => {
    const pid = sleeper();
    const rec = recordProcess('sleep', pid);
    expect(rec.start).toMatch(/^\d+$/);
    expect(stillRunning(rec)).toBe(true);
    expect(stillRunning({ ...rec, start: String(Number(rec.start) + 1) })).toBe(false);
    expect(processStartTime(deadPid())).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')(
    'kills what a gone owner left running (not a reused pid) and removes its directory; leaves a live owner alone',
    async () => {
      const parent = mkdtempSync(join(tmpdir(), 'plugflow-leftovers-'));
      const leftover = recordProcess('etcd', sleeper());
      const reused = recordProcess('kube-apiserver', sleeper());
      ownerFile(join(parent, 'dev-1', 'control-plane'), { pid: deadPid(), start: '1' }, [
        leftover,
        { ...reused, start: String(Number(reused.start) + 7) },
      ]);
      writeFileSync(join(parent, 'dev-1', 'control-plane', 'etcd-data'), 'old');
      // A live run: this process owns it.
      mkdirSync(join(parent, 'dev-2', 'control-plane'), { recursive: true });
      writeOwnerFile(join(parent, 'dev-2', 'control-plane'), [recordProcess('etcd', sleeper())]);
      // No owner file (a run that stopped cleanly): not touched.
      mkdirSync(join(parent, 'dev-3'));

      const lines = await reapLeftovers(parent, 'dev-', 'control-plane');
      expect(lines).toEqual([
        `cleaned up after a run that did not stop (pid ${lines[0]!.match(/pid (\d+)/)![1]}): killed etcd (pid ${leftover.pid}); removed ${join(parent, 'dev-1')}`,
        `${join(parent, 'dev-2')} is in use by a running process (pid ${process.pid}); left alone`,
      ]);
      expect(stillRunning(leftover)).toBe(false);
      expect(stillRunning(reused)).toBe(true);
      expect(existsSync(join(parent, 'dev-1'))).toBe(false);
      expect(existsSync(join(parent, 'dev-2', 'control-plane', OWNER_FILE))).toBe(true);
      expect(existsSync(join(parent, 'dev-3'))).toBe(true);
      expect(await reapDir(join(parent, 'dev-3'))).toEqual({ state: 'none' });
    },
  );
});
