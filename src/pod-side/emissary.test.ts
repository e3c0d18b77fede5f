/**
 * The real emissary binary (built from emissary/ by hack/build-emissary.sh) and the wait side
 * together, without a cluster: what a step pod's main and wait containers do, in one directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectReport } from './wait.js';
import { ensureEmissaryBinary } from './emissary-binary.js';

let emissary: string;
beforeAll(async () => {
  emissary = await ensureEmissaryBinary();
}, 120_000);

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(emissary, args, { env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout });
    });
  });
}

describe('emissary + wait', () => {
  it('runs a script, passes its stdout through, and leaves what the wait container reports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-emissary-'));
    const work = mkdtempSync(join(tmpdir(), 'plugflow-work-'));
    const { code, stdout } = await run(['--', 'sh', join(dir, 'script'), 'arg1'], {
      PLUGFLOW_VAR_DIR: dir,
      PLUGFLOW_SCRIPT: `echo "hello $1"; printf 7 > ${work}/n`,
      PLUGFLOW_OUTPUTS: JSON.stringify([{ name: 'n', path: `${work}/n` }]),
    });
    expect(code).toBe(0);
    expect(stdout).toBe('hello arg1\n');
    expect(readFileSync(join(dir, 'main.done'), 'utf8')).toBe('');
    expect(collectReport(dir, [{ name: 'n', path: `${work}/n` }])).toEqual({
      exitCode: 0,
      result: 'hello arg1',
      stdoutBytes: 11,
      parameters: [{ name: 'n', value: '7' }],
    });
  });

  it('exits with the command exit code and records it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-emissary-'));
    const { code } = await run(['--', 'sh', '-c', 'echo out; exit 5'], { PLUGFLOW_VAR_DIR: dir });
    expect(code).toBe(5);
    expect(collectReport(dir, [])).toEqual({ exitCode: 5, result: 'out', stdoutBytes: 4, parameters: [] });
  });

  it('refuses a command line without --', async () => {
    const { code } = await run(['sh'], { PLUGFLOW_VAR_DIR: tmpdir() });
    expect(code).toBe(2);
  });
});
