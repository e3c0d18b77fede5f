import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installEmissary } from './install.js';

describe('installEmissary', () => {
  it('copies the binary named by PLUGFLOW_EMISSARY into the directory, executable', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'plugflow-install-'));
    const source = join(tmp, 'emissary-src');
    writeFileSync(source, 'binary');
    const target = installEmissary(join(tmp, 'var'), { PLUGFLOW_EMISSARY: source });
    expect(target).toBe(join(tmp, 'var', 'emissary'));
    expect(readFileSync(target, 'utf8')).toBe('binary');
    expect(statSync(target).mode & 0o777).toBe(0o755);
  });

  it('says where it looked when the binary is missing', () => {
    expect(() => installEmissary('/tmp/x', { PLUGFLOW_EMISSARY: '/nonexistent/emissary' })).toThrow(
      /\/nonexistent\/emissary does not exist.*PLUGFLOW_EMISSARY/,
    );
  });
});
