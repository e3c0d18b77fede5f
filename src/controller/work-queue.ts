/**
 * The controller's work queue of workflow keys (`namespace/name`), with the guarantees the
 * reconciler relies on:
 *
 * - dedup: a key waiting in the queue is queued once, however many events arrive for it;
 * - per-key exclusivity: a key handed to a worker is not handed to another until `done(key)`;
 *   an `add` meanwhile marks it dirty and it is queued again after `done`, so no event is lost;
 * - `addAfter`: delayed requeue (engine deadlines, backoffs); the earliest pending time wins;
 * - `addRateLimited`: retry after a failure with per-key exponential backoff; `forget` resets it;
 * - `addUrgent`: ahead of every ordinary key (a hand-over: the workflows a dead replica held);
 * - `shutDown({ drain: true })`: stop accepting work, let workers finish what is queued and in
 *   flight, then release every waiting `get()` with `undefined`.
 *
 * Pure apart from timers; the clock is injectable for tests.
 */
import { backoffDelay, type BackoffPolicy } from '../kube/backoff.js';

export interface WorkQueueOptions {
  /** Backoff of `addRateLimited`. Default 50 ms doubling to 5 min. */
  backoff?: BackoffPolicy;
  now?: () => number;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 50, maxMs: 300_000 };

export class WorkQueue {
  private readonly queue: string[] = [];
  /** Keys to be queued ahead of the ordinary ones; the first `urgentQueued` of `queue` are such. */
  private readonly urgent = new Set<string>();
  private urgentQueued = 0;
  /** Keys that need processing: queued, or added while being processed. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  /** Key → time it becomes due (delayed adds). */
  private readonly delayed = new Map<string, number>();
  private delayTimer?: NodeJS.Timeout;
  private delayTimerAt = Infinity;
  private readonly failures = new Map<string, number>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private readonly now: () => number;

  constructor(private readonly opts: WorkQueueOptions = {}) {
    this.now = opts.now ?? (() => Date.now());
  }

  /** Queues `key` unless it is already queued; a key being processed is requeued after done. */
  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /**
   * Queues `key` ahead of every ordinary key (urgent keys keep their order among themselves); a
   * key already queued moves forward, one being processed goes first once done.
   */
  addUrgent(key: string): void {
    if (this.shuttingDown) return;
    if (this.urgent.has(key)) return this.add(key);
    this.urgent.add(key);
    if (this.dirty.has(key) && !this.processing.has(key)) {
      const at = this.queue.indexOf(key, this.urgentQueued);
      if (at >= 0) {
        this.queue.splice(at, 1);
        this.queue.splice(this.urgentQueued++, 0, key);
      }
      return;
    }
    this.add(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending time for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending !== undefined && pending <= at) return;
    this.delayed.set(key, at);
    this.armDelayTimer();
  }

  /** Queues `key` after its next backoff delay (one more failure counted). */
  addRateLimited(key: string): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    this.addAfter(key, backoffDelay(this.opts.backoff ?? DEFAULT_BACKOFF, n));
  }

  /** Clears the failure count of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Consecutive failures counted for `key`. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /**
   * The next key to process, waiting while the queue is empty; `undefined` once the queue is
   * shut down and (when draining) empty. The caller must call `done(key)` afterwards.
   */
  get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` processed; it is queued again if it was added meanwhile. */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    if (this.dirty.has(key)) this.push(key);
    if (this.processing.size === 0 && this.queue.length === 0) this.notifyIdle();
  }

  /** Keys ready to process (the queue depth metric). */
  len(): number {
    return this.queue.length;
  }

  /** Keys waiting for a delayed add. */
  delayedLen(): number {
    return this.delayed.size;
  }

  /** Keys handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Stops accepting keys and drops delayed ones. With `drain`, resolves once everything queued
   * and in flight is done (waiting workers keep getting keys until the queue is empty); without,
   * queued keys are dropped and it resolves when in-flight keys are done.
   */
  async shutDown(opts: { drain?: boolean } = {}): Promise<void> {
    this.shuttingDown = true;
    clearTimeout(this.delayTimer);
    this.delayed.clear();
    if (!opts.drain) {
      for (const k of this.queue.splice(0)) this.dirty.delete(k);
      this.urgent.clear();
      this.urgentQueued = 0;
    }
    if (this.queue.length === 0) for (const w of this.waiters.splice(0)) w(undefined);
    if (this.processing.size === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private push(key: string): void {
    if (this.urgent.has(key)) this.queue.splice(this.urgentQueued++, 0, key);
    else this.queue.push(key);
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.take());
  }

  private take(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    if (this.urgentQueued > 0) {
      this.urgentQueued--;
      this.urgent.delete(key);
    }
    this.dirty.delete(key);
    this.processing.add(key);
    if (this.shuttingDown && this.queue.length === 0) for (const w of this.waiters.splice(0)) w(undefined);
    return key;
  }

  private notifyIdle(): void {
    if (!this.shuttingDown) return;
    if (this.queue.length === 0) for (const w of this.waiters.splice(0)) w(undefined);
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** One timer for all delayed keys, armed for the earliest. */
  private armDelayTimer(): void {
    let earliest = Infinity;
    for (const at of this.delayed.values()) earliest = Math.min(earliest, at);
    if (earliest === Infinity) {
      clearTimeout(this.delayTimer);
      this.delayTimerAt = Infinity;
      return;
    }
    if (this.delayTimer && earliest >= this.delayTimerAt) return;
    clearTimeout(this.delayTimer);
    this.delayTimerAt = earliest;
    this.delayTimer = setTimeout(() => this.fireDelayed(), Math.max(0, earliest - this.now()));
    this.delayTimer.unref?.();
  }

  private fireDelayed(): void {
    this.delayTimer = undefined;
    this.delayTimerAt = Infinity;
    const now = this.now();
    for (const [key, at] of [...this.delayed]) {
      if (at <= now) {
        this.delayed.delete(key);
        this.add(key);
      }
    }
    this.armDelayTimer();
  }
}
