/**
 * Fair shares of the event workers and of the room to wait, per lane (a namespace): the one
 * scheduler of the embedded queue (event-queue.ts) and of the bus's deliveries (event-bus.ts).
 *
 * One namespace whose events are slow (a template read that hangs, an API server that throttles
 * it) or many (a flood) must not take every slot from the others. So each lane may hold at most
 * `laneWaiting` items waiting and run at most `laneRunning` at once, and the next item to run is
 * taken from the lanes in turn (round robin over the lanes that have one waiting and room to
 * run). With the defaults a lane gets half of each: whatever one namespace does, another always
 * finds room to wait and a worker to run on. Pure bookkeeping, no timers.
 */

export interface FairLanesOptions {
  /** Items waiting at once over all lanes. */
  waiting: number;
  /** Items waiting at once in one lane (default: half of `waiting`, at least 1). */
  laneWaiting?: number;
  /** Items running at once over all lanes (the workers). */
  running: number;
  /** Items running at once from one lane (default: half of `running`, at least 1). */
  laneRunning?: number;
}

interface Lane<T> {
  items: T[];
  head: number;
  running: number;
}

export class FairLanes<T> {
  readonly waitingCap: number;
  readonly laneWaitingCap: number;
  readonly runningCap: number;
  readonly laneRunningCap: number;
  private readonly lanes = new Map<string, Lane<T>>();
  /** Lanes with an item waiting, in turn order. */
  private turn: string[] = [];
  private waitingCount = 0;
  private runningCount = 0;

  constructor(o: FairLanesOptions) {
    this.waitingCap = o.waiting;
    this.laneWaitingCap = o.laneWaiting ?? Math.max(1, Math.ceil(o.waiting / 2));
    this.runningCap = o.running;
    this.laneRunningCap = o.laneRunning ?? Math.max(1, Math.ceil(o.running / 2));
  }

  get waiting(): number {
    return this.waitingCount;
  }

  get running(): number {
    return this.runningCount;
  }

  /** Waiting and running items of one lane. */
  held(lane: string): number {
    const l = this.lanes.get(lane);
    return l ? l.items.length - l.head + l.running : 0;
  }

  /** Whether `lane` may add an item to wait now. */
  hasRoom(lane: string): boolean {
    const l = this.lanes.get(lane);
    return this.waitingCount < this.waitingCap && (l ? l.items.length - l.head : 0) < this.laneWaitingCap;
  }

  /** Adds an item to wait in its lane; false when the lane's share or the whole is full. */
  offer(lane: string, item: T): boolean {
    if (!this.hasRoom(lane)) return false;
    let l = this.lanes.get(lane);
    if (!l) {
      l = { items: [], head: 0, running: 0 };
      this.lanes.set(lane, l);
    }
    if (l.items.length === l.head) this.turn.push(lane);
    l.items.push(item);
    this.waitingCount++;
    return true;
  }

  /**
   * The next item to run, from the next lane in turn that has one waiting and is under its share
   * of the workers; undefined when none may run now. The caller calls `finished(lane)` when it is done.
   */
  next(): { lane: string; item: T } | undefined {
    if (this.runningCount >= this.runningCap) return undefined;
    for (let i = 0; i < this.turn.length; i++) {
      const lane = this.turn[i]!;
      const l = this.lanes.get(lane)!;
      if (l.running >= this.laneRunningCap) continue;
      const item = l.items[l.head]!;
      l.items[l.head++] = undefined as unknown as T;
      this.waitingCount--;
      l.running++;
      this.runningCount++;
      // This lane goes to the back of the turn if it still has items; the others keep their order.
      this.turn.splice(i, 1);
      if (l.head === l.items.length) {
        l.items = [];
        l.head = 0;
      } else this.turn.push(lane);
      return { lane, item };
    }
    return undefined;
  }

  /** An item of `lane` that `next` gave out is done. */
  finished(lane: string): void {
    const l = this.lanes.get(lane);
    if (!l || l.running === 0) throw new Error(`FairLanes: nothing of lane "${lane}" is running`);
    l.running--;
    this.runningCount--;
    if (l.running === 0 && l.items.length === l.head) this.lanes.delete(lane);
  }

  /** Calls `fn` with every waiting item. */
  forEachWaiting(fn: (item: T) => void): void {
    for (const lane of this.turn) {
      const l = this.lanes.get(lane)!;
      for (let i = l.head; i < l.items.length; i++) fn(l.items[i]!);
    }
  }

  /** Takes every waiting item out (in lane turn order), e.g. to hand them back on close. */
  takeWaiting(): T[] {
    const out: T[] = [];
    for (const lane of this.turn) {
      const l = this.lanes.get(lane)!;
      out.push(...l.items.slice(l.head));
      l.items = [];
      l.head = 0;
      if (l.running === 0) this.lanes.delete(lane);
    }
    this.turn = [];
    this.waitingCount = 0;
    return out;
  }
}
