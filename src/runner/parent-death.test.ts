import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { dieWithParent, pdeathsigTool } from './parent-death.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('children that die with their parent', () => {
  it('wraps a command in setpriv --pdeathsig when available and leaves it alone otherwise', () => {
    expect(dieWithParent('etcd', ['--x'], '/usr/bin/setpriv')).toEqual({
      file: '/usr/bin/setpriv',
      args: ['--pdeathsig', 'SIGKILL', '--', 'etcd', '--x'],
    });
    expect(dieWithParent('etcd', ['--x'], false)).toEqual({ file: 'etcd', args: ['--x'] });
  });

  const tool = pdeathsigTool();
  if (!tool) console.log('skipping the SIGKILL test: setpriv --pdeathsig (util-linux 2.33+) is not available here');
  it.runIf(!!tool)('a SIGKILLed parent takes its child with it', async () => {
    // The parent: a node process that starts `sleep` through dieWithParent and prints its pid.
    const code = `
      const { spawn } = require('node:child_process');
      const c = spawn(${JSON.stringify(tool)}, ['--pdeathsig', 'SIGKILL', '--', 'sleep', '300'], { stdio: 'ignore' });
      console.log(c.pid);
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    expect(await until(() => alive(childPid), 2000)).toBe(true);
    parent.kill('SIGKILL');
    expect(await until(() => !alive(childPid), 3000)).toBe(true);
  });
});
