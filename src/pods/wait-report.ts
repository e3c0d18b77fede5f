/**
 * The report a step pod's wait container leaves in its termination message, and the rules that
 * keep it within the kubelet's 4096-byte limit.
 *
 * The kubelet copies the file at terminationMessagePath into
 * `status.containerStatuses[wait].state.terminated.message`, cutting it at 4096 bytes. A cut
 * JSON document would be unreadable, so the report is sized before it is written:
 *   - `result` (stdout) is shortened first, keeping its beginning; `resultTruncatedFrom` then
 *     holds the original size in bytes, and the observer says so in the node's message;
 *   - output parameters are never shortened: if they do not fit, the report carries `error`
 *     instead of them (the step fails and the message says to use an artifact).
 */
import { parseUserJson, UnsafeJsonError } from '../api/index.js';
import { TERMINATION_MESSAGE_LIMIT } from './layout.js';

export interface WaitReport {
  /** Exit code of the main container's command. */
  exitCode: number;
  /** Standard output of the main container (possibly shortened, see resultTruncatedFrom). */
  result?: string;
  /** Set when result was shortened: the full stdout's size in bytes. */
  resultTruncatedFrom?: number;
  parameters: Array<{ name: string; value: string }>;
  /** Names of the output artifacts uploaded (an optional one that was missing is left out). */
  artifacts?: string[];
  /** Why the outputs could not be collected; the step fails with this message. */
  error?: string;
  /**
   * The size in bytes of the stdout `result` was read from (before its trailing newline was
   * dropped), for `resultTruncatedFrom` should the report shorten it. Not written out.
   */
  stdoutBytes?: number;
}

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Serialises a report so that it fits in `limit` bytes (see the module comment for how). */
export function encodeWaitReport(whole: WaitReport, limit = TERMINATION_MESSAGE_LIMIT): string {
  const { stdoutBytes, ...report } = whole;
  const full = JSON.stringify(report);
  if (bytes(full) <= limit) return full;

  // A caller that read only the start of a long stdout passes the full size in resultTruncatedFrom.
  const withoutResult: WaitReport = {
    ...report,
    result: '',
    resultTruncatedFrom: report.resultTruncatedFrom ?? stdoutBytes ?? bytes(report.result ?? ''),
  };
  if (report.result !== undefined && bytes(JSON.stringify(withoutResult)) <= limit) {
    return JSON.stringify({ ...withoutResult, result: longestPrefixThatFits(report.result, withoutResult, limit) });
  }

  const paramBytes = bytes(JSON.stringify(report.parameters));
  const names = report.parameters.map((p) => p.name).join(', ');
  const error =
    report.error ??
    `output parameters (${names}) take ${paramBytes} bytes, more than fits in the ${limit}-byte termination message ` +
      'of the wait container; pass large values as output artifacts';
  const failed: WaitReport = { exitCode: report.exitCode, parameters: [], error };
  const text = JSON.stringify(failed);
  if (bytes(text) <= limit) return text;
  return JSON.stringify({ ...failed, error: longestPrefixThatFits(error, { ...failed, error: '' }, limit, 'error') });
}

/** The longest prefix of `text` that, put into `field` of `base`, keeps the JSON within limit. */
function longestPrefixThatFits(text: string, base: WaitReport, limit: number, field: 'result' | 'error' = 'result'): string {
  const fits = (n: number): boolean => bytes(JSON.stringify({ ...base, [field]: safeSlice(text, n) })) <= limit;
  // Every character takes at least one byte, so no more than `limit` characters can fit.
  let lo = 0;
  let hi = Math.min(text.length, limit);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return safeSlice(text, lo);
}

/** text.slice(0, n) without splitting a surrogate pair. */
function safeSlice(text: string, n: number): string {
  if (n > 0 && n < text.length) {
    const c = text.charCodeAt(n - 1);
    if (c >= 0xd800 && c <= 0xdbff) return text.slice(0, n - 1);
  }
  return text.slice(0, n);
}

/** Parses a termination message written by encodeWaitReport; an error names what is wrong. */
export function parseWaitReport(message: string): { report: WaitReport } | { error: string } {
  let data: unknown;
  try {
    data = parseUserJson(message, "the wait container's termination message");
  } catch (err) {
    if (err instanceof UnsafeJsonError) return { error: err.message };
    return { error: `the wait container's termination message is not JSON: ${JSON.stringify(message.slice(0, 200))}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { error: 'the wait container reported a non-object' };
  const r = data as Record<string, unknown>;
  if (typeof r.exitCode !== 'number' || !Number.isInteger(r.exitCode)) return { error: 'the wait container reported no integer exitCode' };
  if (r.result !== undefined && typeof r.result !== 'string') return { error: 'the wait container reported a non-string result' };
  if (r.error !== undefined && typeof r.error !== 'string') return { error: 'the wait container reported a non-string error' };
  const params = r.parameters ?? [];
  if (!Array.isArray(params) || !params.every((p) => typeof p?.name === 'string' && typeof p?.value === 'string')) {
    return { error: 'the wait container reported parameters that are not a list of {name, value} strings' };
  }
  if (r.artifacts !== undefined && (!Array.isArray(r.artifacts) || !r.artifacts.every((a) => typeof a === 'string')))
    return { error: 'the wait container reported artifacts that are not a list of names' };
  return {
    report: {
      ...(r.artifacts !== undefined ? { artifacts: r.artifacts as string[] } : {}),
      exitCode: r.exitCode,
      ...(r.result !== undefined ? { result: r.result } : {}),
      ...(typeof r.resultTruncatedFrom === 'number' ? { resultTruncatedFrom: r.resultTruncatedFrom } : {}),
      parameters: params as WaitReport['parameters'],
      ...(r.error !== undefined ? { error: r.error } : {}),
    },
  };
}
