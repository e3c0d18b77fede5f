/**
 * The event endpoint's bounded queue and worker pool.
 *
 * `capacity` bounds the events *in process*: waiting in the queue plus being handled by a
 * worker. `offer` (and `offerAndWait`, which also hands back the outcome) refuses an event (the endpoint answers 503) when that many are in process, or
 * once `drain` has begun. `workers` events are handled at once, the rest wait in arrival order.
 * `drain` stops taking events and resolves when every accepted one has been handled — that is
 * how a shutdown loses nothing it said yes to.
 */

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface EventQueueOptions<T, R> {
  capacity: number;
  workers: number;
  handle: (item: T) => Promise<R>;
  /** Awaited by a worker before each item (tests and benchmarks use it to hold workers). */
  gate?: () => Promise<void>;
  /** Called after each change of the number in process (for a gauge). */
  onDepth?: (inProcess: number) => void;
}

interface Entry<T, R> {
  item: T;
  settle?: (o: Outcome<R>) => void;
}

export class EventQueue<T, R> {
  readonly capacity: number;
  readonly workers: number;
  private readonly opts: EventQueueOptions<T, R>;
  private waiting: Entry<T, R>[] = [];
  private head = 0;
  private running = 0;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(opts: EventQueueOptions<T, R>) {
    if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
      throw new Error(`event queue size must be a whole number ≥ 1, got ${opts.capacity}`);
    if (!Number.isInteger(opts.workers) || opts.workers < 1)
      throw new Error(`event worker count must be a whole number ≥ 1, got ${opts.workers}`);
    this.opts = opts;
    this.capacity = opts.capacity;
    // More workers than slots could never all be busy.
    this.workers = Math.min(opts.workers, opts.capacity);
  }

  /** Events accepted and not yet handled (waiting + running). */
  get inProcess(): number {
    return this.waiting.length - this.head + this.running;
  }

  get accepting(): boolean {
    return !this.closed;
  }

  /** Accepts an item if there is room; false when the queue is full or draining. */
  offer(item: T): boolean {
    if (this.closed || this.inProcess >= this.capacity) return false;
    this.waiting.push({ item });
    this.opts.onDepth?.(this.inProcess);
    this.pump();
    return true;
  }

  /**
   * Like `offer`, and returns the promise of the item's outcome (never rejects), or `undefined`
   * when the queue is full or draining.
   */
  offerAndWait(item: T): Promise<Outcome<R>> | undefined {
    if (this.closed || this.inProcess >= this.capacity) return undefined;
    let settle!: (o: Outcome<R>) => void;
    const done = new Promise<Outcome<R>>((resolve) => (settle = resolve));
    this.waiting.push({ item, settle });
    this.opts.onDepth?.(this.inProcess);
    this.pump();
    return done;
  }

  /** Stops accepting and resolves once every accepted item has been handled. */
  drain(): Promise<void> {
    this.closed = true;
    if (this.inProcess === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.running < this.workers && this.head < this.waiting.length) {
      const entry = this.waiting[this.head];
      this.waiting[this.head++] = undefined as unknown as Entry<T, R>;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      this.running++;
      void this.run(entry);
    }
  }

  private async run(entry: Entry<T, R>): Promise<void> {
    let outcome: Outcome<R>;
    try {
      if (this.opts.gate) await this.opts.gate();
      outcome = { ok: true, value: await this.opts.handle(entry.item) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    this.running--;
    entry.settle?.(outcome);
    this.opts.onDepth?.(this.inProcess);
    this.pump();
    if (this.inProcess === 0 && this.idle.length > 0) {
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
