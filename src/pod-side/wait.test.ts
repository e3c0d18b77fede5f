import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseWaitReport } from '../pods/wait-report.js';
import { collectReport, outputsFromEnv, runWait, waitForMain } from './wait.js';

function varDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'plugflow-wait-'));
  mkdirSync(join(dir, 'outputs'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function readReport(path: string) {
  const parsed = parseWaitReport(readFileSync(path, 'utf8'));
  if (!('report' in parsed)) throw new Error(parsed.error);
  return parsed.report;
}

describe('collectReport', () => {
  it('gathers exit code, result and parameters, dropping one trailing newline', () => {
    const dir = varDir({ 'main.exitcode': '0', stdout: 'heads\n', 'outputs/a': 'one\n\n', 'main.done': '' });
    const report = collectReport(dir, [
      { name: 'a', path: '/tmp/a' },
      { name: 'b', path: '/tmp/b', default: 'dflt' },
    ]);
    expect(report).toEqual({
      exitCode: 0,
      result: 'heads',
      stdoutBytes: 6,
      parameters: [
        { name: 'a', value: 'one\n' },
        { name: 'b', value: 'dflt' },
      ],
    });
  });

  it('names the parameter, its path and the reason when a file is missing', () => {
    const dir = varDir({ 'main.exitcode': '0', stdout: '', 'outputs/a.error': 'open /tmp/a: no such file or directory' });
    expect(collectReport(dir, [{ name: 'a', path: '/tmp/a' }]).error).toBe(
      'output parameter "a" (valueFrom.path /tmp/a): open /tmp/a: no such file or directory',
    );
    const failed = varDir({ 'main.exitcode': '2', stdout: '' });
    expect(collectReport(failed, [{ name: 'a', path: '/tmp/a' }])).toEqual({ exitCode: 2, result: '', stdoutBytes: 0, parameters: [] });
  });

  it('reads only the start of a huge stdout and records its size', () => {
    const dir = varDir({ 'main.exitcode': '0', stdout: 'z'.repeat(200_000) });
    const report = collectReport(dir, []);
    expect(report.resultTruncatedFrom).toBe(200_000);
    expect(report.result!.length).toBe(64 * 1024);
  });

  it('fails clearly without an exit code', () => {
    expect(collectReport(varDir(), []).error).toMatch(/without recording its exit code/);
  });
});

describe('runWait', () => {
  it('waits for main.done, then writes the report to the termination log', async () => {
    const dir = varDir({ stdout: 'partial' });
    const log = join(dir, 'termination-log');
    const done = runWait({ dir, terminationLog: log, outputs: [{ name: 'p', path: '/x' }], pollMs: 10 });
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(join(dir, 'stdout'), 'final\n');
    writeFileSync(join(dir, 'outputs', 'p'), 'v');
    writeFileSync(join(dir, 'main.exitcode'), '0');
    writeFileSync(join(dir, 'main.done'), '');
    expect(await done).toBe(0);
    expect(readReport(log)).toEqual({ exitCode: 0, result: 'final', parameters: [{ name: 'p', value: 'v' }] });
  });

  it('gives up when the main heartbeat goes stale without main.done', async () => {
    const dir = varDir({ 'main.alive': '' });
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'main.alive'), old, old);
    expect(await waitForMain({ dir, terminationLog: '', outputs: [], pollMs: 10, staleMs: 1000 })).toBe('stale');
    const log = join(dir, 'termination-log');
    expect(await runWait({ dir, terminationLog: log, outputs: [], pollMs: 10, staleMs: 1000 })).toBe(1);
    expect(readReport(log).error).toMatch(/stopped without reporting/);
  });

  it('exits 1 when a parameter cannot be collected', async () => {
    const dir = varDir({ 'main.exitcode': '0', stdout: '', 'main.done': '' });
    const log = join(dir, 'termination-log');
    expect(await runWait({ dir, terminationLog: log, outputs: [{ name: 'p', path: '/nope' }], pollMs: 10 })).toBe(1);
    expect(readReport(log).error).toMatch(/output parameter "p"/);
  });
});

describe('outputsFromEnv', () => {
  it('parses PLUGFLOW_OUTPUTS and names it when malformed', () => {
    expect(outputsFromEnv({ PLUGFLOW_OUTPUTS: '[{"name":"a","path":"/a","default":"x"}]' })).toEqual([
      { name: 'a', path: '/a', default: 'x' },
    ]);
    expect(outputsFromEnv({})).toEqual([]);
    expect(() => outputsFromEnv({ PLUGFLOW_OUTPUTS: '{' })).toThrow(/PLUGFLOW_OUTPUTS is not JSON/);
    expect(() => outputsFromEnv({ PLUGFLOW_OUTPUTS: '[{"name":1}]' })).toThrow(/PLUGFLOW_OUTPUTS must be/);
  });
});
