import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeShim } from './shim.js';

describe('the plugflow shim', () => {
  it('runs this repository\'s executor commands with the runner\'s emissary', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'plugflow-shim-'));
    const fakeEmissary = join(tmp, 'built-emissary');
    writeFileSync(fakeEmissary, '#!/bin/sh\necho fake\n');
    const binDir = join(tmp, 'bin');
    const shim = writeShim({ binDir, emissary: fakeEmissary, binDirInside: binDir });
    const out = execFileSync(shim, ['executor', 'install', join(tmp, 'var')], { env: { PATH: process.env.PATH ?? '' } }).toString();
    expect(out).toContain(`installed ${join(tmp, 'var', 'emissary')}`);
    expect(readFileSync(join(tmp, 'var', 'emissary'), 'utf8')).toBe('#!/bin/sh\necho fake\n');
  }, 60_000);
});
