/**
 * `valueFrom.jqFilter` of resource template outputs: real jq (jq 1.7 compiled to WebAssembly,
 * the `jq-wasm` package), printed as the peer prints it — each result on its own line, strings
 * raw and everything else as compact JSON, the whole trimmed.
 *
 * A filter is user code running in the controller, so it never runs on the controller's thread:
 * each evaluation gets a worker thread that is terminated after `timeoutMs` (a filter such as
 * `repeat(.)` never ends) and whose WebAssembly memory may not grow past `memoryBytes` (jq's
 * allocations then fail, and the filter with them). The worker starts in ~50 ms; a resource
 * node evaluates its filters once, when it succeeds.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface JqOptions {
  timeoutMs?: number;
  memoryBytes?: number;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const grow = WebAssembly.Memory.prototype.grow;
let limited = false;
WebAssembly.Memory.prototype.grow = function (pages) {
  if (this.buffer.byteLength + pages * 65536 > workerData.memoryBytes) {
    limited = true;
    throw new RangeError('memory limit');
  }
  return grow.call(this, pages);
};
const jq = require(workerData.module);
jq.raw(workerData.input, workerData.filter, ['-r', '-c']).then(
  (out) => parentPort.postMessage({ ok: true, out }),
  (err) => parentPort.postMessage({
    ok: false,
    error: limited ? 'the filter needs more than ' + (workerData.memoryBytes >> 20) + ' MiB' : String((err && err.message) || err),
  }),
);
`;

let modulePath: string | undefined;

/** Runs `filter` over `input` (a JSON value); rejects with jq's own message when it fails. */
export function runJqFilter(input: unknown, filter: string, o: JqOptions = {}): Promise<string> {
  modulePath ??= createRequire(import.meta.url).resolve('jq-wasm');
  const timeoutMs = o.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { module: modulePath, input: JSON.stringify(input), filter, memoryBytes: o.memoryBytes ?? 256 * 1024 * 1024 },
      resourceLimits: { maxOldGenerationSizeMb: 128 },
      stdout: true,
      stderr: true,
    });
    let settled = false;
    const finish = (err: Error | undefined, out?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      if (err) reject(err);
      else resolve(out!.trim());
    };
    const timer = setTimeout(
      () => finish(new Error(`jq filter ${JSON.stringify(filter)} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    worker.on('message', (m: { ok: boolean; out?: string; error?: string }) =>
      m.ok ? finish(undefined, m.out ?? '') : finish(new Error(cleanJqError(m.error ?? 'failed'))),
    );
    worker.on('error', (err) => finish(new Error(`jq filter ${JSON.stringify(filter)}: ${err.message}`)));
    worker.on('exit', (code) => finish(new Error(`jq filter ${JSON.stringify(filter)} stopped (exit ${code})`)));
  });
}

/** jq's compile errors end with "(Unix shell quoting issues?)" and a count line; keep what helps. */
function cleanJqError(message: string): string {
  return message
    .replace(/\s*\(Unix shell quoting issues\?\)/g, '')
    .replace(/\njq: \d+ compile errors?/g, '')
    .trim();
}
