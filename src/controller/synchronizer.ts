/**
 * Synchronization in the controller: the lock table (lock-table.ts), the semaphore limits
 * (semaphore-limits.ts) and the work queue, tied together for the reconciler.
 *
 * One reconcile of a workflow that waits for a lock (reconciler.ts):
 *   1. the engine runs with `observe()` — nothing granted yet — and names what it waits for;
 *   2. `admit()` reads the limits it needs, queues the waiters and serves the queues: if this
 *      workflow got a lock, the engine runs again and starts the holder in the same reconcile;
 *   3. the status is stored, then `settle()` records what it holds now: locks its ended nodes
 *      gave back are served to the next waiters, whose workflows are queued for a reconcile.
 * Rebuilt from the workflows' statuses before the first worker starts (see lock-table.ts).
 */
import { FINAL_WORKFLOW_PHASES, type Workflow } from '../api/index.js';
import type { LockClaim, LockObservation } from '../engine/index.js';
import { lockKeysInStatus } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { grantKey, LockTable, type WaitOrder } from './lock-table.js';
import { SemaphoreLimits } from './semaphore-limits.js';

export type Claims = { holding: LockClaim[]; waiting: LockClaim[] };

export interface SynchronizerOptions {
  client: Pick<KubeClient, 'get'>;
  /** Queues a workflow (`ns/name`) for a reconcile. */
  enqueue: (key: string) => void;
  log: Logger;
  /** How often the limits of waited-for semaphores are read again. Default 1 s. */
  refreshMs?: number;
  /**
   * With several active replicas (sharding.ts): called before a workflow's first wait is queued;
   * throws HandedOver on a replica that does not grant locks, so nothing is queued there.
   */
  route?: (wf: Workflow) => Promise<void>;
}

const keyOf = (wf: Workflow) => `${wf.metadata?.namespace}/${wf.metadata?.name}`;

export function waitOrderOf(wf: Workflow): WaitOrder {
  const priority = Number(wf.spec?.priority ?? 0);
  const created = Date.parse(wf.metadata?.creationTimestamp ?? '');
  return { priority: Number.isFinite(priority) ? priority : 0, createdMs: Number.isNaN(created) ? 0 : created };
}

export class Synchronizer {
  readonly table: LockTable;
  private readonly limits: SemaphoreLimits;
  private timer: NodeJS.Timeout | undefined;
  private refreshing = false;

  constructor(private readonly opts: SynchronizerOptions) {
    this.limits = new SemaphoreLimits(opts.client, { refreshMs: opts.refreshMs });
    this.table = new LockTable((lock) => this.limits.get(lock));
  }

  /** Rebuilds the table from the statuses and starts re-reading semaphore limits (again after a stop). */
  start(workflows: Iterable<Workflow>): void {
    this.stop();
    const list = [...workflows];
    this.table.rebuild(
      list.map((wf) => ({
        key: keyOf(wf),
        order: waitOrderOf(wf),
        final: FINAL_WORKFLOW_PHASES.includes(wf.status?.phase ?? ''),
        ...(wf.status?.synchronization ? { synchronization: wf.status.synchronization } : {}),
      })),
    );
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The locks as `wf`'s engine sees them: those its status names, `more`, and its own in the table. */
  observe(wf: Workflow, more?: Claims): Record<string, LockObservation> {
    const { holding, waiting } = lockKeysInStatus(wf.status?.synchronization);
    const keys = [...holding.map(([lock]) => lock), ...waiting];
    for (const c of [...(more?.holding ?? []), ...(more?.waiting ?? [])]) keys.push(...c.locks);
    return this.table.observe(keyOf(wf), keys);
  }

  /**
   * Queues `wf`'s waiting holders and serves the queues (after reading the limits they need).
   * True when `wf` should be run again before its status is stored: a waiter of it was served,
   * or it waits for a lock its engine did not observe (or whose limit was not known).
   */
  async admit(wf: Workflow, claims: Claims | undefined, observed: Record<string, LockObservation> | undefined): Promise<boolean> {
    if (!claims || claims.waiting.length === 0) return false;
    await this.opts.route?.(wf);
    const locks = claims.waiting.flatMap((c) => c.locks);
    // A lock the engine did not see (its first wait) or whose limit was not read: its message would be wrong.
    const unknown = locks.some((l) => observed?.[l] === undefined || observed[l].limit === undefined);
    await this.limits.ensure(locks);
    this.table.enqueue(keyOf(wf), waitOrderOf(wf), claims.waiting);
    const granted = this.serve(keyOf(wf));
    return granted || unknown;
  }

  /** After `wf`'s status was stored: what it holds now (undefined claims: nothing, it ended). */
  settle(wf: Workflow, seen: ReadonlySet<string>, claims: Claims | undefined): void {
    if (this.table.settle(keyOf(wf), waitOrderOf(wf), seen, claims)) this.serve(undefined);
  }

  /** The workflow was deleted: its locks go to the next waiters. */
  forget(key: string): void {
    if (this.table.forget(key)) this.serve(undefined);
  }

  /** Serves the queues; queues every workflow granted something except `self`; true if `self` was. */
  private serve(self: string | undefined): boolean {
    let mine = false;
    for (const key of this.table.dispatch()) {
      if (key === self) mine = true;
      else this.opts.enqueue(key);
    }
    return mine;
  }

  private async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const waited = this.table.waitedSemaphores();
      if (waited.length > 0 && (await this.limits.refresh(waited))) this.serve(undefined);
    } catch (err) {
      this.opts.log.warn('reading semaphore limits failed; trying again', { error: errorMessage(err) });
    } finally {
      this.refreshing = false;
    }
  }
}

/** The grants an engine run saw (`lock\0holder`), for `settle`. */
export function grantsSeen(observed: Record<string, LockObservation> | undefined): Set<string> {
  const seen = new Set<string>();
  for (const [lock, obs] of Object.entries(observed ?? {})) for (const holder of obs.granted) seen.add(grantKey(lock, holder));
  return seen;
}
