/**
 * The event endpoint's bounded queue and worker pool.
 *
 * `capacity` bounds the events *in process*: waiting in the queue plus being handled by a
 * worker. `offer` (and `offerAndWait`, which also hands back the outcome) refuses an event (the
 * endpoint answers 503) when that many are in process, or once `drain` has begun. `workers`
 * events are handled at once. `drain` stops taking events and resolves when every accepted one
 * has been handled — that is how a shutdown loses nothing it said yes to.
 *
 * With `laneOf` (a server of several namespaces: the event's namespace), the queue is fair
 * (fair-lanes.ts): one lane holds at most half of the capacity and runs on at most half of the
 * workers, and waiting events are taken from the lanes in turn — one namespace's flood or slow
 * events leave the others room. Without it, one lane: arrival order.
 */
import { FairLanes } from './fair-lanes.js';

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface EventQueueOptions<T, R> {
  capacity: number;
  workers: number;
  handle: (item: T) => Promise<R>;
  /** Awaited by a worker before each item (tests and benchmarks use it to hold workers). */
  gate?: () => Promise<void>;
  /** Called after each change of the number in process (for a gauge). */
  onDepth?: (inProcess: number) => void;
  /** The lane of an item (its namespace) for fair shares; without it one lane. */
  laneOf?: (item: T) => string;
}

interface Entry<T, R> {
  item: T;
  settle?: (o: Outcome<R>) => void;
}

export class EventQueue<T, R> {
  readonly capacity: number;
  readonly workers: number;
  /** Most events of one lane in process at once. */
  readonly laneCapacity: number;
  private readonly opts: EventQueueOptions<T, R>;
  private readonly lanes: FairLanes<Entry<T, R>>;
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
    const fair = opts.laneOf !== undefined;
    this.laneCapacity = fair ? Math.max(1, Math.ceil(this.capacity / 2)) : this.capacity;
    this.lanes = new FairLanes({
      waiting: this.capacity,
      laneWaiting: this.capacity,
      running: this.workers,
      laneRunning: fair ? Math.max(1, Math.ceil(this.workers / 2)) : this.workers,
    });
  }

  /** Events accepted and not yet handled (waiting + running). */
  get inProcess(): number {
    return this.lanes.waiting + this.lanes.running;
  }

  get accepting(): boolean {
    return !this.closed;
  }

  /** Accepts an item if there is room; false when the queue (or the item's share of it) is full or draining. */
  offer(item: T): boolean {
    return this.add({ item });
  }

  /**
   * Like `offer`, and returns the promise of the item's outcome (never rejects), or `undefined`
   * when the queue is full or draining.
   */
  offerAndWait(item: T): Promise<Outcome<R>> | undefined {
    let settle!: (o: Outcome<R>) => void;
    const done = new Promise<Outcome<R>>((resolve) => (settle = resolve));
    return this.add({ item, settle }) ? done : undefined;
  }

  /** Why the queue would refuse an item of this lane now: `full`, `share` (its lane holds its share), or undefined. */
  refusal(item: T): 'full' | 'share' | undefined {
    if (this.inProcess >= this.capacity) return 'full';
    if (this.lanes.held(this.laneOf(item)) >= this.laneCapacity) return 'share';
    return undefined;
  }

  /** Stops accepting and resolves once every accepted item has been handled. */
  drain(): Promise<void> {
    this.closed = true;
    if (this.inProcess === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private laneOf(item: T): string {
    return this.opts.laneOf?.(item) ?? '';
  }

  private add(entry: Entry<T, R>): boolean {
    if (this.closed || this.refusal(entry.item) !== undefined) return false;
    this.lanes.offer(this.laneOf(entry.item), entry);
    this.opts.onDepth?.(this.inProcess);
    this.pump();
    return true;
  }

  private pump(): void {
    for (let next = this.lanes.next(); next; next = this.lanes.next()) void this.run(next.lane, next.item);
  }

  private async run(lane: string, entry: Entry<T, R>): Promise<void> {
    let outcome: Outcome<R>;
    try {
      if (this.opts.gate) await this.opts.gate();
      outcome = { ok: true, value: await this.opts.handle(entry.item) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    this.lanes.finished(lane);
    entry.settle?.(outcome);
    this.opts.onDepth?.(this.inProcess);
    this.pump();
    if (this.inProcess === 0 && this.idle.length > 0) {
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
