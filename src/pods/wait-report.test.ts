import { describe, expect, it } from 'vitest';
import { encodeWaitReport, parseWaitReport, type WaitReport } from './wait-report.js';

const size = (s: string): number => Buffer.byteLength(s, 'utf8');

describe('encodeWaitReport', () => {
  it('keeps a small report whole and parses it back', () => {
    const report: WaitReport = { exitCode: 0, result: 'hi\n', parameters: [{ name: 'p', value: 'v' }] };
    const text = encodeWaitReport(report);
    expect(parseWaitReport(text)).toEqual({ report });
  });

  it('shortens result to fit, keeps its start, and records the original size', () => {
    const result = 'x'.repeat(10_000);
    const text = encodeWaitReport({ exitCode: 0, result, parameters: [{ name: 'p', value: 'keep me' }] });
    expect(size(text)).toBeLessThanOrEqual(4096);
    const parsed = parseWaitReport(text);
    if (!('report' in parsed)) throw new Error(parsed.error);
    expect(parsed.report.parameters).toEqual([{ name: 'p', value: 'keep me' }]);
    expect(parsed.report.resultTruncatedFrom).toBe(10_000);
    expect(result.startsWith(parsed.report.result!)).toBe(true);
    // As long as possible: one more character would not fit.
    expect(size(text)).toBeGreaterThan(4096 - 2);
  });

  it('records the size of stdout as read, the trailing newline that result dropped included, and never writes stdoutBytes', () => {
    const small = parseWaitReport(encodeWaitReport({ exitCode: 0, result: 'hi', stdoutBytes: 3, parameters: [] }));
    expect(small).toEqual({ report: { exitCode: 0, result: 'hi', parameters: [] } });
    const parsed = parseWaitReport(encodeWaitReport({ exitCode: 0, result: 'y'.repeat(9_999), stdoutBytes: 10_000, parameters: [] }));
    if (!('report' in parsed)) throw new Error(parsed.error);
    expect(parsed.report.resultTruncatedFrom).toBe(10_000);
    expect(parsed.report).not.toHaveProperty('stdoutBytes');
  });

  it('never splits a multi-byte character or a surrogate pair', () => {
    const result = '€😀'.repeat(2000);
    const text = encodeWaitReport({ exitCode: 0, result, parameters: [] });
    expect(size(text)).toBeLessThanOrEqual(4096);
    const parsed = parseWaitReport(text);
    if (!('report' in parsed)) throw new Error(parsed.error);
    expect(result.startsWith(parsed.report.result!)).toBe(true);
    expect(parsed.report.result!.endsWith('\ud83d')).toBe(false);
  });

  it('accounts for JSON escaping when sizing', () => {
    const text = encodeWaitReport({ exitCode: 0, result: '"\n\\'.repeat(3000), parameters: [] }, 500);
    expect(size(text)).toBeLessThanOrEqual(500);
  });

  it('fails clearly instead of shortening parameters that do not fit', () => {
    const text = encodeWaitReport({ exitCode: 0, result: 'r', parameters: [{ name: 'big', value: 'y'.repeat(5000) }] });
    expect(size(text)).toBeLessThanOrEqual(4096);
    const parsed = parseWaitReport(text);
    if (!('report' in parsed)) throw new Error(parsed.error);
    expect(parsed.report.parameters).toEqual([]);
    expect(parsed.report.error).toMatch(/output parameters \(big\) take \d+ bytes.*4096-byte termination message.*artifacts/);
    expect(parsed.report.exitCode).toBe(0);
  });
});

describe('parseWaitReport', () => {
  it('names what is wrong with a bad message', () => {
    expect(parseWaitReport('oops')).toEqual({ error: expect.stringMatching(/not JSON/) });
    expect(parseWaitReport('{"result":"x","parameters":[]}')).toEqual({ error: expect.stringMatching(/exitCode/) });
    expect(parseWaitReport('{"exitCode":0,"parameters":[{"name":"a","value":1}]}')).toEqual({ error: expect.stringMatching(/parameters/) });
  });
});
