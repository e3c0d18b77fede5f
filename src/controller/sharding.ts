/**
 * Active-active controllers: every replica reconciles a share of the workflows and
 * CronWorkflows, assigned by consistent hashing (shard-ring.ts) over the live replicas announced
 * through Leases (shard-members.ts). No namespace split, no consensus of our own.
 *
 * - **Ownership:** a worker reconciles a key only while the ring gives it to this replica; when
 *   the members change every replica queues the keys it now owns (hand-over within a lease: a
 *   dead replica's share moves after `leaseDurationMs` plus one list period).
 * - **Fencing:** every status write is conditional on the resourceVersion it was computed from
 *   (status-writer.ts) and records the writer in `status.controller`. A new owner's first write
 *   changes the object, so a late write of the old owner fails with 409 instead of overwriting;
 *   on re-reading it sees the new owner and stops. Pods have names derived from their node ids,
 *   so a step started twice across a hand-over is refused by the API server as AlreadyExists.
 * - **Synchronization:** grants must come from one lock table, so the workflows that take locks
 *   go to one replica: the holder of the coordinator Lease (`<lease>-coordinator`, the usual
 *   leader election of leader-election.ts, so that a new coordinator starts granting only after
 *   the old one's lease expired). A workflow is known to take locks from its spec, its status,
 *   or — for locks in referenced templates — the label `workflows.plugflow.io/uses-locks` that the first
 *   replica to see it wait for one sets before handing it over (`HandedOver`).
 * - **Housekeeping** (archive retention, swept offloaded nodes) runs on the coordinator only.
 * - **Watches by share:** a replica watches only the pods of the shard buckets it owns (their
 *   bucket label, bucketed-pods.ts), the coordinator every workflow pod (its lock users come from
 *   every bucket). A replica reconciles a gained workflow only once its pod cache holds that
 *   workflow's bucket completely; workflows themselves are watched whole (selecting them by
 *   bucket would take a label write per workflow).
 */
import { FINAL_WORKFLOW_PHASES, LABEL_USES_LOCKS, shardBucketOfKey, type Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { LeaderElector } from './leader-election.js';
import { ShardMembers } from './shard-members.js';
import type { ShardRing } from './shard-ring.js';
import type { PodBuckets } from './bucketed-pods.js';
import type { ControllerCaches } from './caches.js';
import { CRON_KEY_PREFIX } from './cron-reconciler.js';
import type { Synchronizer } from './synchronizer.js';
import type { WorkQueue } from './work-queue.js';

export interface ShardingOptions {
  client: KubeClient;
  /** The installation namespace, where the Leases live. */
  namespace: string;
  identity: string;
  /** The leader lease's name; the coordinator lease is `<leaseName>-coordinator`. */
  leaseName: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log: Logger;
  /** The cached workflow of a queue key, to route the workflows that take locks. */
  workflowOf: (key: string) => Workflow | undefined;
  /** Every key this replica may have to reconcile (cached workflows and CronWorkflows). */
  allKeys: () => Iterable<string>;
  /** Queues a key. */
  enqueue: (key: string) => void;
  /**
   * Queues a key ahead of the ordinary ones: an unfinished workflow this replica just gained (its
   * steps wait for nobody else), so a replica that gained a third of the work does not reach it
   * only after its own backlog. Defaults to `enqueue`.
   */
  enqueueUrgent?: (key: string) => void;
  /** This replica became (true) or stopped being (false) the coordinator. */
  onCoordinator: (coordinator: boolean) => void;
  /** The pod cache, told which buckets to watch; without it every pod is assumed in sight. */
  pods?: ShardPods;
}

/** What sharding needs of the pod cache (bucketed-pods.ts). */
export interface ShardPods {
  watch(buckets: PodBuckets): Promise<void>;
  covers(bucket: number): boolean;
  coversAll(): boolean;
}

/** Thrown by the lock table's admission on a replica that is not the coordinator: the workflow moved. */
export class HandedOver extends Error {
  constructor(readonly key: string) {
    super(`${key} takes synchronization locks: handed over to the coordinator replica`);
    this.name = 'HandedOver';
  }
}

/** Whether a workflow takes locks, as far as can be seen without resolving its template references. */
export function takesLocks(wf: Workflow): boolean {
  if (wf.metadata?.labels?.[LABEL_USES_LOCKS] === 'true' || wf.status?.synchronization !== undefined) return true;
  const spec = wf.spec;
  return spec?.synchronization !== undefined || (spec?.templates ?? []).some((t) => t?.synchronization !== undefined);
}

export class Sharding {
  readonly members: ShardMembers;
  private readonly coordinator: LeaderElector;
  private readonly stopper = new AbortController();

  constructor(private readonly opts: ShardingOptions) {
    const timing = { leaseDurationMs: opts.leaseDurationMs, renewDeadlineMs: opts.renewDeadlineMs, retryPeriodMs: opts.retryPeriodMs };
    this.members = new ShardMembers({
      client: opts.client,
      namespace: opts.namespace,
      identity: opts.identity,
      ...timing,
      log: opts.log,
      onChange: (ring, before) => this.handOver(ring, before),
    });
    this.coordinator = new LeaderElector({
      client: opts.client,
      namespace: opts.namespace,
      name: `${opts.leaseName}-coordinator`,
      identity: opts.identity,
      ...timing,
      log: opts.log,
    });
  }

  get identity(): string {
    return this.opts.identity;
  }

  /** The cached workflow of a queue key. */
  workflowOf(key: string): Workflow | undefined {
    return this.opts.workflowOf(key);
  }

  isCoordinator(): boolean {
    return this.coordinator.isLeader();
  }

  /**
   * Whether another replica still holds `wf` (its `status.controller`, and live): then this
   * replica, though the ring gives it the workflow now, waits — the ms until it looks again — for
   * that one to let go (`release`) or to be counted out. Two replicas whose views of the members
   * differ for a moment so never take one workflow from each other back and forth.
   */
  heldElsewhere(wf: Workflow): number | undefined {
    const holder = wf.status?.controller;
    if (!holder || holder === this.opts.identity || this.members.isGone(holder)) {
      if (holder && holder !== this.opts.identity)
        this.opts.log.info('taking the workflow over from a replica that is gone', {
          workflow: `${wf.metadata?.namespace}/${wf.metadata?.name}`,
          from: holder,
        });
      return undefined;
    }
    return this.opts.retryPeriodMs ?? 2_000;
  }

  /**
   * Lets go of a workflow this replica recorded itself on but no longer owns: clears
   * `status.controller` (conditionally on the version read), which wakes the new owner.
   */
  async release(wf: Workflow & { metadata: { resourceVersion?: string } }): Promise<void> {
    // A finished workflow needs no fence: what is left (GC, archiving) is safe to do twice.
    if (wf.status?.controller !== this.opts.identity || FINAL_WORKFLOW_PHASES.includes(wf.status.phase ?? '')) return;
    try {
      await this.opts.client.mergePatch(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, {
        metadata: { resourceVersion: wf.metadata.resourceVersion },
        status: { controller: null },
      });
      this.opts.log.info('let go of a workflow another replica owns now', { workflow: `${wf.metadata.namespace}/${wf.metadata.name}` });
    } catch (err) {
      // Changed meanwhile (the new owner wrote first) or gone: nothing to let go of.
      this.opts.log.debug('could not let go of a workflow', { error: errorMessage(err) });
    }
  }

  /** Whether this replica reconciles `key` now: it owns it, and its pod cache shows its pods. */
  owns(key: string): boolean {
    const wf = this.opts.workflowOf(key);
    const pods = this.opts.pods;
    if (wf && takesLocks(wf)) return this.isCoordinator() && (pods?.coversAll() ?? true);
    return this.members.owns(key) && (pods?.covers(shardBucketOfKey(key)) ?? true);
  }

  /** Joins the members, then competes for the coordinator role in the background. */
  async start(): Promise<void> {
    await this.members.start();
    void this.competeForCoordinator();
  }

  /** Leaves; `release` false (a lost lease) leaves the Leases to expire. */
  async stop(release = true): Promise<void> {
    this.stopper.abort();
    await Promise.all([this.members.stop(release), release ? this.coordinator.stop() : Promise.resolve()]);
  }

  /**
   * A workflow that waits for a lock on this replica: labelled so that every replica routes it to
   * the coordinator; throws HandedOver unless this replica is the coordinator.
   */
  async routeLockUser(wf: Workflow): Promise<void> {
    const key = `${wf.metadata?.namespace}/${wf.metadata?.name}`;
    if (wf.metadata?.labels?.[LABEL_USES_LOCKS] !== 'true') {
      await this.opts.client.mergePatch(WORKFLOWS, wf.metadata!.namespace, wf.metadata!.name!, {
        metadata: { labels: { [LABEL_USES_LOCKS]: 'true' } },
      });
    }
    if (!this.isCoordinator()) throw new HandedOver(key);
  }

  private async competeForCoordinator(): Promise<void> {
    while (!this.stopper.signal.aborted) {
      let lost!: () => void;
      const lostOnce = new Promise<void>((r) => (lost = r));
      if (!(await this.coordinator.acquire(() => lost()))) return;
      this.opts.log.info('this replica is the coordinator: it grants synchronization locks and runs housekeeping', {
        identity: this.opts.identity,
      });
      this.opts.onCoordinator(true);
      this.watchPods();
      this.queueAll((key) => this.owns(key));
      await Promise.race([lostOnce, new Promise((r) => this.stopper.signal.addEventListener('abort', r, { once: true }))]);
      this.opts.onCoordinator(false);
      this.watchPods();
      // The lock users go to the next coordinator: queued here so that the worker lets go of them.
      this.queueAll((key) => {
        const wf = this.opts.workflowOf(key);
        return wf !== undefined && takesLocks(wf);
      });
    }
  }

  /**
   * Members changed: queue every key this replica gained, and every key it lost (the worker lets
   * go of those, see `release`).
   */
  private handOver(ring: ShardRing, before: ShardRing): void {
    const me = this.opts.identity;
    this.queueAll((key) => (ring.ownerOf(key) === me) !== (before.ownerOf(key) === me));
    this.watchPods();
  }

  /**
   * Points the pod cache at this replica's buckets now (every pod on the coordinator); once it
   * holds them, queues the keys that became this replica's by it.
   */
  private watchPods(): void {
    const pods = this.opts.pods;
    if (!pods) return;
    const ownedBefore = new Set<string>();
    for (const key of this.opts.allKeys()) if (this.owns(key)) ownedBefore.add(key);
    const wanted: PodBuckets = this.isCoordinator() ? 'all' : this.members.ring().bucketsOf(this.opts.identity);
    pods.watch(wanted).then(
      () => this.queueAll((key) => !ownedBefore.has(key) && this.owns(key)),
      (err: unknown) => this.opts.log.error("could not watch the pods of this replica's buckets", { error: errorMessage(err) }),
    );
  }

  private queueAll(moved: (key: string) => boolean): void {
    let n = 0;
    const urgent = this.opts.enqueueUrgent ?? this.opts.enqueue;
    for (const key of this.opts.allKeys()) {
      if (!moved(key)) continue;
      const phase = this.opts.workflowOf(key)?.status?.phase ?? '';
      if (this.owns(key) && !FINAL_WORKFLOW_PHASES.includes(phase)) urgent(key);
      else this.opts.enqueue(key);
      n++;
    }
    if (n > 0) this.opts.log.info('the workflows of this replica changed', { keys: n, identity: this.opts.identity });
  }
}

/** The controller's Sharding: its keys are the cached workflows and CronWorkflows, its coordinator keeps the lock table. */
export function shardingOf(
  base: Pick<ShardingOptions, 'client' | 'namespace' | 'identity' | 'leaseName' | 'log'>,
  timing: Pick<ShardingOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>,
  caches: ControllerCaches,
  queue: WorkQueue,
  locks: () => Synchronizer,
): Sharding {
  return new Sharding({
    ...base,
    leaseDurationMs: timing.leaseDurationMs,
    renewDeadlineMs: timing.renewDeadlineMs,
    retryPeriodMs: timing.retryPeriodMs,
    workflowOf: (key) => {
      const [ns, name] = key.split('/');
      return ns && name ? caches.workflow(ns, name) : undefined;
    },
    allKeys: function* () {
      for (const wf of caches.workflows.list()) yield `${wf.metadata.namespace}/${wf.metadata.name}`;
      for (const c of caches.cronWorkflows.list()) yield `${CRON_KEY_PREFIX}${c.metadata.namespace}/${c.metadata.name}`;
    },
    enqueue: (key) => queue.add(key),
    enqueueUrgent: (key) => queue.addUrgent(key),
    pods: caches.pods,
    // The coordinator grants locks from a table rebuilt from the statuses when it takes over.
    onCoordinator: (coordinator) => (coordinator ? locks().start(caches.workflows.list()) : locks().stop()),
  });
}
