/**
 * A bound on reads of huge workflows at once. Reading a 100,000-node workflow (archived, or live
 * with its nodes offloaded to the database) costs the database and the server seconds of work; a
 * few callers asking in parallel once exhausted the server. Such reads take a slot here: `running`
 * at once, `waiting` more queued in order, and beyond that a 503 with Retry-After that says why.
 * Reads of ordinary workflows never come here.
 */
import { unavailable } from './errors.js';

/** A workflow with more nodes than this is a large read. */
export const LARGE_READ_NODES = 5000;

export interface LargeReadLimits {
  running: number;
  waiting: number;
}

export const DEFAULT_LARGE_READ_LIMITS: LargeReadLimits = { running: 2, waiting: 8 };

export class LargeReads {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly limits: LargeReadLimits = DEFAULT_LARGE_READ_LIMITS) {}

  /** Runs `read` in a slot (waiting for one in order); refuses at once when the queue is full. */
  async run<T>(what: string, read: () => Promise<T>): Promise<T> {
    if (this.active >= this.limits.running) {
      if (this.queue.length >= this.limits.waiting)
        throw unavailable(
          `${what} is a large read and ${this.active} are running with ${this.queue.length} waiting (the server's bound); try again shortly`,
          2,
        );
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else this.active++;
    try {
      return await read();
    } finally {
      // The slot passes straight to the next in line, or is given back.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Reads running and waiting (metrics, tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.queue.length };
  }
}
