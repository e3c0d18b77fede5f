import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './shim.js';

/**
 * bin/early-signals.js: plugflow as PID 1 of a container (its own PID namespace) ends on
 * SIGTERM while it has no handler of its own, instead of ignoring it as PID 1 does; once a
 * command installs a handler, that handler decides.
 */
function runAsPid1(preload: boolean, script: string): Promise<{ code: number | null; ms: number; out: string }> {
  const args = [
    '--pid',
    '--fork',
    '--mount-proc',
    '--',
    process.execPath,
    ...(preload ? ['--import', join(REPO_ROOT, 'bin', 'early-signals.js')] : []),
    '-e',
    script,
  ];
  const child = spawn('unshare', args, { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => {
    let t0 = 0;
    child.stdout.once('data', () => {
      t0 = Date.now();
      process.kill(-child.pid!, 'SIGTERM');
    });
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 3000);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      resolve({ code: code ?? (sig === 'SIGKILL' ? 137 : null), ms: Date.now() - t0, out });
    });
  });
}

const loading = "console.log('pid', process.pid); setTimeout(() => {}, 60000);";
const handled =
  "process.on('SIGTERM', () => { console.log('handled'); process.exit(0); }); console.log('pid', process.pid); setTimeout(() => {}, 60000);";

describe('early signals', () => {
  it.runIf(process.getuid?.() === 0)(
    "PID 1 without a handler ignores SIGTERM; with early-signals it ends with 143; a command's own handler wins",
    async () => {
      const ignored = await runAsPid1(false, loading);
      expect(ignored.out).toContain('pid 1');
      expect(ignored.code).toBe(137); // only the SIGKILL after 3 s ended it
      const ended = await runAsPid1(true, loading);
      expect(ended.code).toBe(143);
      expect(ended.ms).toBeLessThan(2000);
      const own = await runAsPid1(true, handled);
      expect(own).toMatchObject({ code: 0 });
      expect(own.out).toContain('handled');
    },
    20_000,
  );
});
