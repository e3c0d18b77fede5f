import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLaunch, quote, staged, type NamespaceTools } from './launch.js';

const tools: NamespaceTools = {
  root: '/tmp/r',
  stage: '/run/stage',
  unshare: '/usr/bin/unshare',
  sh: '/bin/sh',
  mount: '/bin/mount',
  mkdir: '/bin/mkdir',
  setpriv: '/usr/bin/setpriv',
};

describe('buildLaunch', () => {
  it('spawns argv directly without namespaces', () => {
    expect(buildLaunch({ argv: ['echo', 'hi'], mounts: [], cwd: '/w' }, undefined)).toEqual({ file: 'echo', args: ['hi'], cwd: '/w' });
  });

  it('mounts the stage, a private /tmp, then volumes by depth, and execs argv', () => {
    const l = buildLaunch(
      {
        argv: ['sh', '-c', "echo 'x'"],
        mounts: [
          { source: '/tmp/r/p/vol/cfg', target: '/etc/cfg/sub', readOnly: true, file: false },
          { source: '/tmp/r/p/vol/data', target: '/data', readOnly: false, file: false },
          { source: '/tmp/r/p/c/term', target: '/dev/termination-log', readOnly: false, file: true },
        ],
        cwd: '/data',
        privateTmp: '/tmp/r/p/c/tmp',
        runAs: { uid: 1000, gid: 2000, groups: [3000] },
      },
      tools,
    );
    expect(l.file).toBe('/usr/bin/unshare');
    const script = l.args[l.args.indexOf('-c') + 1];
    expect(l.args.slice(l.args.indexOf('-c') + 2)).toEqual(['sh', 'sh', '-c', "echo 'x'"]);
    expect(script.split('\n')).toEqual([
      'set -e',
      "'/bin/mount' --bind '/tmp/r' '/run/stage'",
      "'/bin/mkdir' -p '/tmp'",
      "'/bin/mount' --bind '/run/stage/p/c/tmp' '/tmp'",
      "'/bin/mkdir' -p '/data'",
      "'/bin/mount' --bind '/run/stage/p/vol/data' '/data'",
      "[ -e '/dev/termination-log' ] || { '/bin/mkdir' -p '/dev'; : > '/dev/termination-log'; }",
      "'/bin/mount' --bind '/run/stage/p/c/term' '/dev/termination-log'",
      "'/bin/mkdir' -p '/etc/cfg/sub'",
      "'/bin/mount' --bind '/run/stage/p/vol/cfg' '/etc/cfg/sub'",
      "'/bin/mount' -o remount,bind,ro '/etc/cfg/sub'",
      "'/bin/mkdir' -p '/data'",
      "cd '/data'",
      'exec \'/usr/bin/setpriv\' --reuid=1000 --regid=2000 --groups=3000 -- "$@"',
    ]);
  });

  it('leaves /tmp alone when a volume is mounted there', () => {
    const l = buildLaunch(
      { argv: ['x'], mounts: [{ source: '/v', target: '/tmp/', readOnly: false, file: false }], cwd: '/', privateTmp: '/p' },
      tools,
    );
    expect(l.args.join(' ')).not.toContain("'/p'");
  });
});

describe('quote and staged', () => {
  it('quotes anything for sh', () => {
    const odd = `it's "$HOME" \`x\` $(y)`;
    expect(execFileSync('sh', ['-c', `printf %s ${quote(odd)}`]).toString()).toBe(odd);
  });

  it('maps paths under the runner directory to the stage only', () => {
    expect(staged('/tmp/r', tools)).toBe('/run/stage');
    expect(staged('/tmp/r/a/b', tools)).toBe('/run/stage/a/b');
    expect(staged('/tmp/rx/a', tools)).toBe('/tmp/rx/a');
    expect(staged('/etc/hosts', tools)).toBe('/etc/hosts');
  });
});

describe('the script in a real mount namespace', () => {
  it.runIf(process.getuid?.() === 0)('shows a bind mount to the process only', () => {
    const root = mkdtempSync(join(tmpdir(), 'plugflow-launch-'));
    const stage = mkdtempSync(join(tmpdir(), 'plugflow-stage-'));
    writeFileSync(join(root, 'f'), 'inside');
    const target = join(mkdtempSync(join(tmpdir(), 'plugflow-target-')), 'mnt');
    const real: NamespaceTools = { root, stage, unshare: 'unshare', sh: '/bin/sh', mount: 'mount', mkdir: 'mkdir' };
    const l = buildLaunch(
      { argv: ['cat', `${target}/f`], mounts: [{ source: root, target, readOnly: true, file: false }], cwd: '/' },
      real,
    );
    expect(execFileSync(l.file, l.args).toString()).toBe('inside');
    expect(() => execFileSync('cat', [`${target}/f`], { stdio: 'ignore' })).toThrow();
  });
});

describe('dying with the runner', () => {
  it('wraps the command in setpriv --pdeathsig, passes it on with --kill-child, and sets it again after a user change', () => {
    const direct = buildLaunch({ argv: ['echo', 'hi'], mounts: [], cwd: '/w' }, undefined, '/usr/bin/setpriv');
    expect(direct).toEqual({ file: '/usr/bin/setpriv', args: ['--pdeathsig', 'SIGKILL', '--', 'echo', 'hi'], cwd: '/w' });
    const l = buildLaunch({ argv: ['id'], mounts: [], cwd: '/', runAs: { uid: 65534, gid: 65534, groups: [] } }, tools, '/usr/bin/setpriv');
    expect(l.file).toBe('/usr/bin/setpriv');
    expect(l.args.slice(0, 5)).toEqual(['--pdeathsig', 'SIGKILL', '--', '/usr/bin/unshare', '--mount']);
    expect(l.args).toContain('--kill-child=SIGKILL');
    expect(l.args[l.args.indexOf('-c') + 1]).toContain('--reuid=65534 --regid=65534 --clear-groups --pdeathsig SIGKILL -- "$@"');
  });

  it('mounts the fixed host binds right after the stage, before the private /tmp', () => {
    const withBinds = { ...tools, binds: [{ source: '/tmp/my checkout', target: '/run/cli', readOnly: true, file: false }] };
    const l = buildLaunch({ argv: ['x'], mounts: [], cwd: '/', privateTmp: '/tmp/r/p/tmp' }, withBinds);
    expect(l.args[l.args.indexOf('-c') + 1].split('\n').slice(1, 7)).toEqual([
      "'/bin/mount' --bind '/tmp/r' '/run/stage'",
      "'/bin/mkdir' -p '/run/cli'",
      "'/bin/mount' --bind '/tmp/my checkout' '/run/cli'",
      "'/bin/mount' -o remount,bind,ro '/run/cli'",
      "'/bin/mkdir' -p '/tmp'",
      "'/bin/mount' --bind '/run/stage/p/tmp' '/tmp'",
    ]);
  });
});
