/**
 * `plugflow executor wait`: the wait container of a step pod. It waits until the emissary in
 * the main container marks it done, gathers exit code, stdout and output parameter files from
 * the shared volume, and writes them as a WaitReport to its termination message file. The
 * kubelet copies that file into the pod status, where the controller reads it: the pod never
 * writes to the Kubernetes API and needs no RBAC.
 */
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DONE_FILE,
  ENV_OUTPUTS,
  EXIT_CODE_FILE,
  HEARTBEAT_FILE,
  HEARTBEAT_STALE_MS,
  OUTPUTS_DIR,
  STDOUT_FILE,
  type OutputFileSpec,
} from '../pods/layout.js';
import { encodeWaitReport, type WaitReport } from '../pods/wait-report.js';
import { errorMessage } from '../log/error-message.js';
import type { OutputArtifactPlan } from '../artifacts/plan.js';
import { uploadOutputs } from './output-artifacts.js';

export interface WaitOptions {
  /** The shared directory (VAR_DIR). */
  dir: string;
  /** Where the report goes (the container's terminationMessagePath). */
  terminationLog: string;
  outputs: OutputFileSpec[];
  /** Output artifacts to upload once the main container is done (output-artifacts.ts). */
  artifacts?: OutputArtifactPlan[];
  /** Where credentials are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Lines for the container's log (uploads with sizes and checksums). */
  log?: (line: string) => void;
  pollMs?: number;
  /** Heartbeat age after which the main container is taken for dead. */
  staleMs?: number;
  signal?: AbortSignal;
}

/** Reads PLUGFLOW_OUTPUTS; a malformed value is an error that names the variable. */
export function outputsFromEnv(env: NodeJS.ProcessEnv = process.env): OutputFileSpec[] {
  const text = env[ENV_OUTPUTS];
  if (!text) return [];
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`${ENV_OUTPUTS} is not JSON: ${errorMessage(err)}`);
  }
  if (
    !Array.isArray(data) ||
    !data.every(
      (o) => typeof o?.name === 'string' && typeof o?.path === 'string' && (o.default === undefined || typeof o.default === 'string'),
    )
  ) {
    throw new Error(`${ENV_OUTPUTS} must be a JSON list of {name, path, default?} strings`);
  }
  return data as OutputFileSpec[];
}

/** Resolves when main.done exists ('done'), or the heartbeat went stale ('stale'). */
export async function waitForMain(opts: WaitOptions): Promise<'done' | 'stale'> {
  const poll = opts.pollMs ?? 250;
  const staleMs = opts.staleMs ?? HEARTBEAT_STALE_MS;
  for (;;) {
    if (exists(join(opts.dir, DONE_FILE))) return 'done';
    const beat = mtime(join(opts.dir, HEARTBEAT_FILE));
    // Check main.done again: the emissary stops its heartbeat just before writing it.
    if (beat !== undefined && Date.now() - beat > staleMs && !exists(join(opts.dir, DONE_FILE))) return 'stale';
    opts.signal?.throwIfAborted();
    await sleep(poll, undefined, { signal: opts.signal });
  }
}

/** At most this much of stdout is read; the report can hold far less anyway. */
const MAX_RESULT_READ = 64 * 1024;

/**
 * Builds the report from the shared directory once the main container is done. One trailing
 * newline is dropped from the result and from each parameter file, as users of the peer expect
 * (`echo heads` yields `heads`).
 */
export function collectReport(dir: string, outputs: OutputFileSpec[]): WaitReport {
  const codeText = readText(join(dir, EXIT_CODE_FILE));
  const exitCode = codeText === undefined ? NaN : Number(codeText.trim());
  if (!Number.isInteger(exitCode)) {
    return {
      exitCode: -1,
      parameters: [],
      error: `the main container finished without recording its exit code in ${join(dir, EXIT_CODE_FILE)}`,
    };
  }
  const report: WaitReport = { exitCode, parameters: [] };
  const stdoutPath = join(dir, STDOUT_FILE);
  const size = fileSize(stdoutPath);
  if (size !== undefined) {
    report.result = dropNewline(readHead(stdoutPath, MAX_RESULT_READ));
    report.stdoutBytes = size;
    if (size > MAX_RESULT_READ) report.resultTruncatedFrom = size;
  }
  const problems: string[] = [];
  for (const o of outputs) {
    const value = readText(join(dir, OUTPUTS_DIR, o.name));
    if (value !== undefined) {
      report.parameters.push({ name: o.name, value: dropNewline(value) });
    } else if (o.default !== undefined) {
      report.parameters.push({ name: o.name, value: o.default });
    } else {
      const why = readText(join(dir, OUTPUTS_DIR, `${o.name}.error`))?.trim() ?? 'the main container did not copy it';
      problems.push(`output parameter "${o.name}" (valueFrom.path ${o.path}): ${why}`);
    }
  }
  // A failed command often leaves no output files; its exit code is the real story then.
  if (problems.length && exitCode === 0) report.error = problems.join('; ');
  return report;
}

/** The whole wait container: wait, collect, write; returns the process exit code. */
export async function runWait(opts: WaitOptions): Promise<number> {
  const how = await waitForMain(opts);
  const report: WaitReport =
    how === 'done'
      ? await withArtifacts(collectReport(opts.dir, opts.outputs), opts)
      : {
          exitCode: -1,
          parameters: [],
          error: `the main container stopped without reporting (no heartbeat for ${Math.round((opts.staleMs ?? HEARTBEAT_STALE_MS) / 1000)}s); it was probably killed`,
        };
  const text = encodeWaitReport(report);
  writeFileSync(opts.terminationLog, text);
  return report.error ? 1 : 0;
}

/**
 * Uploads the packed output artifacts (also after a failed command: what it left is often what
 * explains the failure). A required artifact that could not be uploaded fails a step whose
 * command succeeded, like a missing output parameter.
 */
async function withArtifacts(report: WaitReport, opts: WaitOptions): Promise<WaitReport> {
  if (!opts.artifacts?.length || report.exitCode === -1) return report;
  let outcome;
  try {
    outcome = await uploadOutputs(opts.dir, opts.artifacts, opts.env ?? process.env);
  } catch (err) {
    return report.exitCode === 0 && !report.error ? { ...report, error: `output artifacts: ${errorMessage(err)}` } : report;
  }
  for (const line of outcome.log) opts.log?.(line);
  const out: WaitReport = { ...report };
  if (outcome.uploaded.length) out.artifacts = outcome.uploaded;
  if (outcome.errors.length && report.exitCode === 0) out.error = [report.error, ...outcome.errors].filter(Boolean).join('; ');
  return out;
}

function dropNewline(s: string): string {
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}

function exists(path: string): boolean {
  return mtime(path) !== undefined;
}

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function readHead(path: string, max: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
