import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * `make dev-node` without --exit printed "running; press Ctrl-C to stop" and exited at once with
 * status 0, leaving the node running with nobody to stop it: with everything in the cluster,
 * nothing held the process open. Here a child runs serveUntilStopped with nothing else open.
 */
describe('serveUntilStopped', () => {
  it('keeps running with nothing else open until a signal, then stops what was started and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-serve-'));
    const script = join(dir, 'main.mts');
    const module = pathToFileURL(join(import.meta.dirname, 'serve-until-stopped.ts')).href;
    writeFileSync(
      script,
      `import { serveUntilStopped } from ${JSON.stringify(module)};
await serveUntilStopped({
  flags: { submit: [] },
  say: (l) => console.log(l),
  stopping: 'stopping…',
  stop: async () => { console.log('stopped what was started'); },
  banner: ['banner'],
  sample: async () => true,
});`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 20_000;
    while (!out.includes('running; press Ctrl-C to stop') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('running; press Ctrl-C to stop');
    // Still there a second later: nothing but the wait for a signal holds it.
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r('alive'), 1500))]);
    expect(early, out).toBe('alive');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('stopped what was started');
  }, 30_000);
});
