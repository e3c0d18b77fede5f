/**
 * Where the runner keeps container logs, and how to read them (`plugflow logs` uses this).
 * Layout: `<runner dir>/<namespace>/<pod>/<container>.log`, stdout and stderr interleaved as the
 * process wrote them; a restarted container appends to the same file. A pod created again
 * under the same name starts with fresh logs.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function podLogDir(root: string, namespace: string, pod: string): string {
  return join(root, namespace, pod);
}

export function containerLogPath(root: string, namespace: string, pod: string, container: string): string {
  return join(podLogDir(root, namespace, pod), `${container}.log`);
}

export interface ReadLogOptions {
  /** Only the last N bytes (the start is cut at a line boundary). */
  tailBytes?: number;
}

/** The log of one container; throws naming the pod and container when there is none. */
export function readContainerLog(root: string, namespace: string, pod: string, container: string, opts: ReadLogOptions = {}): string {
  const path = containerLogPath(root, namespace, pod, container);
  if (!existsSync(path)) throw new Error(`no log for container "${container}" of pod ${namespace}/${pod} in ${root}`);
  const size = statSync(path).size;
  const start = opts.tailBytes !== undefined && size > opts.tailBytes ? size - opts.tailBytes : 0;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - start);
    const n = readSync(fd, buf, 0, buf.length, start);
    let text = buf.subarray(0, n).toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return text;
  } finally {
    closeSync(fd);
  }
}
