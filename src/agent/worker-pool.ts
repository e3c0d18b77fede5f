/**
 * A bound on how many plugin/http calls the agent makes at once. Tasks that are waiting (for a
 * requeue or a backoff) hold no slot: only calls in flight count, so a thousand polling tasks
 * cannot starve a new one, and a burst of new tasks cannot open a thousand sockets.
 */
export class WorkerPool {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`worker pool size must be a positive integer, got ${size}`);
  }

  /** Runs `fn` when a slot is free; the slot is released when it settles. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next)
        next(); // hand the slot over without releasing it
      else this.active--;
    }
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
