import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executableByOthers, unreadablePackage, writeShim } from './shim.js';

describe('the plugflow shim', () => {
  it("runs the package's compiled CLI (bin/plugflow.js) from where containers see it, with the runner's emissary", () => {
    // Paths with spaces and quotes: a checkout may live anywhere.
    const tmp = mkdtempSync(join(tmpdir(), "plugflow shim 'x' "));
    const fakeEmissary = join(tmp, 'built-emissary');
    writeFileSync(fakeEmissary, '#!/bin/sh\necho fake\n');
    const pkg = join(tmp, 'pkg dir');
    mkdirSync(join(pkg, 'bin'), { recursive: true });
    writeFileSync(
      join(pkg, 'bin', 'plugflow.js'),
      'console.log(JSON.stringify({ argv: process.argv.slice(1), emissary: process.env.PLUGFLOW_EMISSARY }));\n',
    );
    const binDir = join(tmp, 'bin');
    const shim = writeShim({
      binDir,
      emissary: fakeEmissary,
      binDirInside: '/stage/_bin',
      packageInside: pkg,
      nodeInside: process.execPath,
    });
    expect(readFileSync(shim, 'utf8')).not.toMatch(/tsx/);
    const out = JSON.parse(execFileSync(shim, ['executor', 'install', 'a b'], { env: { PATH: '/usr/bin:/bin' } }).toString());
    expect(out).toEqual({ argv: [join(pkg, 'bin', 'plugflow.js'), 'executor', 'install', 'a b'], emissary: '/stage/_bin/emissary' });
    expect(readFileSync(join(binDir, 'emissary'), 'utf8')).toBe('#!/bin/sh\necho fake\n');
  });

  it('knows when other users cannot run node or read the package where they are', () => {
    const modes: Record<string, number> = {
      '/root': 0o40700,
      '/root/.nvm': 0o40755,
      '/root/.nvm/node': 0o100755,
      '/usr': 0o40755,
      '/usr/bin': 0o40755,
      '/usr/bin/node': 0o100755,
    };
    const stat = (p: string) => {
      if (!(p in modes)) throw new Error(`ENOENT ${p}`);
      return { mode: modes[p] };
    };
    expect(executableByOthers('/root/.nvm/node', stat)).toBe(false);
    expect(executableByOthers('/usr/bin/node', stat)).toBe(true);
    const pkg = mkdtempSync(join(tmpdir(), 'plugflow-pkg-'));
    mkdirSync(join(pkg, 'bin'));
    writeFileSync(join(pkg, 'bin', 'plugflow.js'), '');
    chmodSync(pkg, 0o755);
    chmodSync(join(pkg, 'bin', 'plugflow.js'), 0o644);
    expect(unreadablePackage(pkg)).toBeUndefined();
    chmodSync(join(pkg, 'bin', 'plugflow.js'), 0o600);
    expect(unreadablePackage(pkg)).toBe(`${join(pkg, 'bin', 'plugflow.js')} has mode 0600`);
  });
});
