/**
 * The controller's table of synchronization locks (src/engine/synchronization.ts decides what a
 * workflow needs; this decides who gets it): for every lock, its holders; for every workflow, the
 * holders it has waiting, in the order they are served — `spec.priority` (higher first), then the
 * workflow's creation time, then the order they started waiting.
 *
 * Why it is safe:
 * - Every grant is made here, synchronously (one JavaScript thread, so two reconciles never both
 *   take the last place), and counted at once, before the holder's status says it holds it.
 * - The engine creates a holder's pod only in a reconcile that saw the grant, and the status
 *   (with the holding) is stored before any pod is created (reconciler.ts), so after a restart
 *   the table rebuilt from the statuses counts every holder whose pod may run. A grant whose
 *   status was never stored started nothing and is simply given again.
 * - A grant is given back only when the workflow's engine, having seen it, no longer holds it
 *   (its node ended), when the workflow ends, or when it is deleted.
 * - After a rebuild, a workflow that waited (its status says so) keeps its place: until its first
 *   reconcile names its waiting holders, nobody behind it on those locks is served.
 *
 * A holder waits for all its locks at once; a waiter that cannot be served blocks every later
 * waiter of its locks (first come, first served; nobody starves).
 */
import type { LockClaim, LockObservation } from '../engine/index.js';
import { lockKeysInStatus, parseLockKey } from '../engine/index.js';
import type { SynchronizationStatus } from '../api/index.js';

/** A lock's limit: how many may hold it, or why none can (a semaphore's ConfigMap is missing…). */
export type LockLimit = { limit: number } | { problem: string };

export interface WaitOrder {
  /** `spec.priority`; higher is served first. */
  priority: number;
  /** Creation time of the workflow, ms. */
  createdMs: number;
}

interface Waiter {
  workflow: string;
  /** Undefined for a place kept after a rebuild, until the workflow names its holder. */
  holder?: string;
  locks: string[];
  order: WaitOrder;
  seq: number;
}

/** A workflow as the table reads it after a restart. */
export interface LockedWorkflow {
  key: string;
  order: WaitOrder;
  final: boolean;
  synchronization?: SynchronizationStatus;
}

export class LockTable {
  /** Lock → holder → the workflow key it belongs to. */
  private readonly held = new Map<string, Map<string, string>>();
  /** Workflow key → the locks it holds something of (an index of `held`: a reconcile touches only its own). */
  private readonly heldBy = new Map<string, Set<string>>();
  /** Workflow key → its waiters. */
  private readonly waiting = new Map<string, Waiter[]>();
  private seq = 0;

  /** `limitOf` gives a semaphore's limit; a mutex always has 1. Undefined: not known yet. */
  constructor(private readonly limitOf: (lock: string) => LockLimit | undefined) {}

  /** Rebuilds the table from the workflows' statuses (after a start, or a new leadership). */
  rebuild(workflows: Iterable<LockedWorkflow>): void {
    this.held.clear();
    this.heldBy.clear();
    this.waiting.clear();
    for (const wf of workflows) {
      if (wf.final) continue;
      const { holding, waiting } = lockKeysInStatus(wf.synchronization);
      for (const [lock, holder] of holding) this.hold(lock, holder, wf.key);
      const places = [...new Set(waiting)].map((lock) => ({ workflow: wf.key, locks: [lock], order: wf.order, seq: this.seq++ }));
      if (places.length > 0) this.waiting.set(wf.key, places);
    }
  }

  /**
   * The locks as the engine of `workflow` observes them: `keys`, and every lock it holds or
   * waits for here.
   */
  observe(workflow: string, keys: Iterable<string>): Record<string, LockObservation> {
    const all = new Set(keys);
    for (const lock of this.heldBy.get(workflow) ?? []) all.add(lock);
    for (const w of this.waiting.get(workflow) ?? []) for (const lock of w.locks) all.add(lock);
    const out: Record<string, LockObservation> = Object.create(null) as Record<string, LockObservation>;
    for (const lock of all) {
      const holders = this.held.get(lock) ?? new Map<string, string>();
      const granted = [...holders].filter(([, wf]) => wf === workflow).map(([h]) => h);
      const limit = this.limit(lock);
      out[lock] = {
        granted,
        holders: [...holders.keys()],
        ...(limit && 'limit' in limit ? { limit: limit.limit } : {}),
        ...(limit && 'problem' in limit ? { problem: limit.problem } : {}),
      };
    }
    return out;
  }

  /**
   * The workflow's holders now wait for these locks (replacing what it waited for before). True
   * when its waiters changed (so serving the queues may grant something new).
   */
  enqueue(workflow: string, order: WaitOrder, waiting: readonly LockClaim[]): boolean {
    const previous = this.waiting.get(workflow) ?? [];
    const before = new Map(previous.filter((w) => w.holder !== undefined).map((w) => [w.holder!, w.seq]));
    const next = waiting
      .filter((c) => !this.holdsAll(c))
      .map((c): Waiter => ({ workflow, holder: c.holder, locks: [...c.locks], order, seq: before.get(c.holder) ?? this.seq++ }));
    if (next.length > 0) this.waiting.set(workflow, next);
    else this.waiting.delete(workflow);
    return !sameWaiters(previous, next);
  }

  /**
   * After the workflow's status was stored: it holds `claims.holding` and waits for
   * `claims.waiting` (undefined: it ended, and holds nothing). `seen` are the grants its engine
   * saw (`lock\0holder`): only those it then dropped are given back — a grant made meanwhile stays.
   * True when something was given back or its waiters changed: only then may serving the queues
   * grant anything new (a workflow without locks costs nothing here).
   */
  settle(
    workflow: string,
    order: WaitOrder,
    seen: ReadonlySet<string>,
    claims: { holding: LockClaim[]; waiting: LockClaim[] } | undefined,
  ): boolean {
    if (!claims) return this.forget(workflow);
    const keep = new Set<string>();
    for (const c of claims.holding) for (const lock of c.locks) keep.add(grantKey(lock, c.holder));
    let released = false;
    for (const lock of [...(this.heldBy.get(workflow) ?? [])]) {
      const holders = this.held.get(lock)!;
      for (const [holder, wf] of holders) {
        if (wf !== workflow) continue;
        const k = grantKey(lock, holder);
        if (!keep.has(k) && seen.has(k)) {
          this.release(lock, holder);
          released = true;
        }
      }
    }
    for (const k of keep) {
      const [lock, holder] = k.split('\0') as [string, string];
      this.hold(lock, holder, workflow);
    }
    const requeued = this.enqueue(workflow, order, claims.waiting);
    return released || requeued;
  }

  /** The workflow is gone (deleted, or ended): everything it held or waited for is let go. True if it had any. */
  forget(workflow: string): boolean {
    const locks = [...(this.heldBy.get(workflow) ?? [])];
    for (const lock of locks) {
      for (const [holder, wf] of this.held.get(lock) ?? []) if (wf === workflow) this.release(lock, holder);
    }
    const waited = this.waiting.delete(workflow);
    return locks.length > 0 || waited;
  }

  /** Serves the waiters in order while their locks have room; returns the workflows granted something. */
  dispatch(): Set<string> {
    const granted = new Set<string>();
    const waiters = [...this.waiting.values()].flat().sort(byOrder);
    const blocked = new Set<string>();
    const room = new Map<string, number>();
    const roomOf = (lock: string) => {
      let r = room.get(lock);
      if (r === undefined) {
        const limit = this.limit(lock);
        r = limit && 'limit' in limit ? limit.limit - (this.held.get(lock)?.size ?? 0) : 0;
        room.set(lock, r);
      }
      return r;
    };
    for (const w of waiters) {
      const free = w.holder !== undefined && w.locks.every((l) => !blocked.has(l) && roomOf(l) > 0);
      if (!free) {
        for (const l of w.locks) blocked.add(l);
        continue;
      }
      for (const l of w.locks) {
        this.hold(l, w.holder!, w.workflow);
        room.set(l, roomOf(l) - 1);
      }
      const rest = (this.waiting.get(w.workflow) ?? []).filter((x) => x !== w);
      if (rest.length > 0) this.waiting.set(w.workflow, rest);
      else this.waiting.delete(w.workflow);
      granted.add(w.workflow);
    }
    return granted;
  }

  /** Semaphore locks somebody waits for (their limits are re-read while they do). */
  waitedSemaphores(): string[] {
    const out = new Set<string>();
    for (const ws of this.waiting.values())
      for (const w of ws) for (const l of w.locks) if (parseLockKey(l)?.kind === 'semaphore') out.add(l);
    return [...out];
  }

  /** Holders of `lock` now (for tests and the status). */
  holdersOf(lock: string): string[] {
    return [...(this.held.get(lock)?.keys() ?? [])];
  }

  private limit(lock: string): LockLimit | undefined {
    const parsed = parseLockKey(lock);
    if (!parsed) return { problem: `${JSON.stringify(lock)} is not a lock key` };
    return parsed.kind === 'mutex' ? { limit: 1 } : this.limitOf(lock);
  }

  private hold(lock: string, holder: string, workflow: string): void {
    let holders = this.held.get(lock);
    if (!holders) this.held.set(lock, (holders = new Map()));
    holders.set(holder, workflow);
    let mine = this.heldBy.get(workflow);
    if (!mine) this.heldBy.set(workflow, (mine = new Set()));
    mine.add(lock);
  }

  /** Gives back `holder`'s grant of `lock`, keeping both maps in step. */
  private release(lock: string, holder: string): void {
    const holders = this.held.get(lock);
    const workflow = holders?.get(holder);
    if (!holders || workflow === undefined) return;
    holders.delete(holder);
    if (holders.size === 0) this.held.delete(lock);
    if ([...holders.values()].includes(workflow)) return;
    const mine = this.heldBy.get(workflow);
    mine?.delete(lock);
    if (mine?.size === 0) this.heldBy.delete(workflow);
  }

  private holdsAll(c: LockClaim): boolean {
    return c.locks.every((l) => this.held.get(l)?.has(c.holder) === true);
  }
}

/** The key of one grant in `seen`. */
export function grantKey(lock: string, holder: string): string {
  return `${lock}\0${holder}`;
}

/** The same holders waiting for the same locks, in the same order of arrival. */
function sameWaiters(a: readonly Waiter[], b: readonly Waiter[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (w, i) =>
        w.holder === b[i]!.holder &&
        w.seq === b[i]!.seq &&
        w.locks.length === b[i]!.locks.length &&
        w.locks.every((l, j) => l === b[i]!.locks[j]),
    )
  );
}

function byOrder(a: Waiter, b: Waiter): number {
  return (
    b.order.priority - a.order.priority ||
    a.order.createdMs - b.order.createdMs ||
    (a.workflow < b.workflow ? -1 : a.workflow > b.workflow ? 1 : 0) ||
    a.seq - b.seq
  );
}
