/**
 * Collects node results and writes them into the TaskSet status in small merge-patch batches:
 * `{status: {nodes: {<id>: {phase, message, outputs, progress}}}}`.
 *
 * - Results of many tasks finishing together go out in one patch (at most `maxBatch` nodes and
 *   about `maxBatchBytes` of JSON, so a patch stays small: a single result is bounded by
 *   reply-validation.ts, so it always fits on its own), after at most `delayMs`.
 * - A newer result of a node replaces an unsent older one: only the latest state matters.
 * - Absent fields are sent as `null`, which a merge patch turns into "remove": an interim
 *   `progress` must not survive into the final result.
 * - A failed write is retried with backoff; results are never dropped while the agent runs.
 */
import type { NodeResult } from '../api/index.js';

export type PatchStatus = (patch: { status: { nodes: Record<string, NodeWire> } }) => Promise<void>;

/** A node result as written: every field present, null meaning "none". */
export interface NodeWire {
  phase: string | null;
  message: string | null;
  outputs: unknown;
  progress: string | null;
}

export interface StatusBatcherOptions {
  /** Longest a result waits before its patch goes out. */
  delayMs?: number;
  maxBatch?: number;
  /** Largest patch body, roughly (JSON bytes of the node results); default MAX_PATCH_BYTES. */
  maxBatchBytes?: number;
  /** First retry delay after a failed patch; doubles up to 10 s. */
  retryMs?: number;
  onError?: (err: unknown, nodes: string[]) => void;
}

/**
 * 512 KiB: far below the API server's 3 MiB request limit and the ~1.5 MiB object limit, yet
 * room for several of the largest results (MAX_OUTPUTS_BYTES + MAX_MESSAGE_LENGTH) at once.
 */
export const MAX_PATCH_BYTES = 512 * 1024;

export class StatusBatcher {
  private pending = new Map<string, NodeWire>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;
  private stopped = false;
  private readonly delayMs: number;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly retryMs: number;
  /** Patches sent successfully (for metrics and tests). */
  patches = 0;

  constructor(
    private readonly patch: PatchStatus,
    private readonly opts: StatusBatcherOptions = {},
  ) {
    this.delayMs = opts.delayMs ?? 50;
    this.maxBatch = opts.maxBatch ?? 25;
    this.maxBatchBytes = opts.maxBatchBytes ?? MAX_PATCH_BYTES;
    this.retryMs = opts.retryMs ?? 200;
  }

  /** Queues the latest result of a node. */
  set(nodeId: string, result: NodeResult): void {
    this.pending.set(nodeId, {
      phase: result.phase ?? null,
      message: result.message ?? null,
      outputs: result.outputs ?? null,
      progress: result.progress ?? null,
    });
    if (this.pending.size >= this.maxBatch) this.schedule(0);
    else this.schedule(this.delayMs);
  }

  /** Drops an unsent result (the task was removed from the TaskSet; writing it would leave a stray entry). */
  forget(nodeId: string): void {
    this.pending.delete(nodeId);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Sends everything queued now; resolves when the queue is empty or writing failed once. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    while (this.pending.size > 0) {
      this.flushing = this.sendOne();
      const ok = await this.flushing.then(
        () => true,
        () => false,
      );
      this.flushing = undefined;
      if (!ok) return;
    }
  }

  /** Stops the timers; pending results stay unsent unless flush() is called first. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer && ms > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.flushing) {
      await this.flushing.catch(() => {});
      if (this.pending.size > 0) this.schedule(0);
      return;
    }
    if (this.pending.size === 0) return;
    this.flushing = this.sendOne();
    try {
      await this.flushing;
      this.failures = 0;
      if (this.pending.size > 0) this.schedule(this.pending.size >= this.maxBatch ? 0 : this.delayMs);
    } catch {
      this.failures++;
      this.schedule(Math.min(10_000, this.retryMs * 2 ** (this.failures - 1)));
    } finally {
      this.flushing = undefined;
    }
  }

  /** Sends one batch; on failure puts the entries back unless newer ones arrived meanwhile. */
  private async sendOne(): Promise<void> {
    const batch: Array<[string, NodeWire]> = [];
    let bytes = 0;
    for (const entry of this.pending) {
      const size = Buffer.byteLength(JSON.stringify(entry)) + 2;
      if (batch.length >= this.maxBatch || (batch.length > 0 && bytes + size > this.maxBatchBytes)) break;
      batch.push(entry);
      bytes += size;
    }
    for (const [id] of batch) this.pending.delete(id);
    try {
      await this.patch({ status: { nodes: Object.fromEntries(batch) } });
      this.patches++;
    } catch (err) {
      for (const [id, wire] of batch) if (!this.pending.has(id)) this.pending.set(id, wire);
      this.opts.onError?.(
        err,
        batch.map(([id]) => id),
      );
      throw err;
    }
  }
}
