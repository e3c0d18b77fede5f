/**
 * The controller's pod cache, watching either every workflow pod or — with several active
 * replicas (sharding.ts) — only the pods of the shard buckets this replica owns (their
 * `workflows.plugflow.io/shard-bucket` label, api/shard-bucket.ts), so that the API server sends
 * each pod event to the one replica that needs it instead of to every replica.
 *
 * The watched buckets change when the members do. A change starts a second informer on the new
 * selector, and only once it has listed everything does it replace the first (which is then
 * stopped): the cache never has a gap, and `covers` says which buckets it holds completely — the
 * replica reconciles a gained workflow only from then on, never from a cache that does not show
 * its pods yet. The two informers overlap for a moment; an event seen twice only queues a key
 * twice, which the work queue folds into one.
 *
 * Pods without a bucket label (made by a version before buckets) are watched by every replica
 * through a second informer that selects just them: nothing is missed across an upgrade, and once
 * those pods are gone that watch carries no traffic.
 */
import { LABEL_SHARD_BUCKET, LABEL_WORKFLOW } from '../api/index.js';
import type { IndexFunc, KubeObject } from '../kube/object-store.js';
import type { Informer, InformerHandlers, InformerLike, InformerStats } from '../kube/informer.js';

/** The pods watched: every workflow pod, or those of some buckets. */
export type PodBuckets = 'all' | readonly number[];

/** The workflow pods without a bucket label. */
export const UNBUCKETED_SELECTOR = `${LABEL_WORKFLOW},!${LABEL_SHARD_BUCKET}`;

/** The label selector of `buckets`: no bucket selects nothing (a value no pod carries). */
export function podSelector(buckets: PodBuckets): string {
  if (buckets === 'all') return LABEL_WORKFLOW;
  return `${LABEL_WORKFLOW},${LABEL_SHARD_BUCKET} in (${buckets.length > 0 ? buckets.join(',') : 'none'})`;
}

const sameBuckets = (a: PodBuckets, b: PodBuckets): boolean =>
  a === 'all' || b === 'all' ? a === b : a.length === b.length && a.every((x, i) => x === b[i]);

export class BucketedPods<T extends KubeObject> implements InformerLike {
  private current: Informer<T>;
  /** The pods without a bucket, while watching by bucket. */
  private readonly unbucketed?: Informer<T>;
  private watching: PodBuckets = [];
  /** `watching` as a set: `covers` is asked on every dequeue of a key (sharding.ts, owns). */
  private watchingSet: ReadonlySet<number> = new Set();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly indexes: [string, IndexFunc<T>][] = [];
  /** The change in progress: changes are made one at a time, the last asked for wins. */
  private changing: Promise<void> = Promise.resolve();
  private wanted: PodBuckets;
  /** The informer of a change in progress, until it replaces `current`. */
  private pending?: Informer<T>;
  private started = false;
  private stopped = false;

  /** `make` builds an informer on a label selector (same client, namespace, transform…). */
  constructor(
    private readonly make: (labelSelector: string) => Informer<T>,
    buckets: PodBuckets,
  ) {
    this.wanted = normalize(buckets);
    this.setWatching(this.wanted);
    this.current = make(podSelector(this.watching));
    if (buckets !== 'all') this.unbucketed = make(UNBUCKETED_SELECTOR);
  }

  /** Whether the cache holds every pod of `bucket` (all buckets while watching every pod). */
  covers(bucket: number): boolean {
    return this.hasSynced() && (this.watching === 'all' || this.watchingSet.has(bucket));
  }

  /** Whether the cache holds every workflow pod, labelled with a bucket or not. */
  coversAll(): boolean {
    return this.current.hasSynced() && this.watching === 'all';
  }

  /**
   * Watches `buckets` from now on; resolves once the cache holds them completely (or at once when
   * it already does). Calls made meanwhile queue behind it; only the last one is made.
   */
  watch(buckets: PodBuckets): Promise<void> {
    this.wanted = normalize(buckets);
    this.changing = this.changing.then(() => this.change());
    return this.changing;
  }

  private async change(): Promise<void> {
    const target = this.wanted;
    if (this.stopped || sameBuckets(target, this.watching)) return;
    const next = this.make(podSelector(target));
    for (const [name, fn] of this.indexes) next.addIndex(name, fn);
    for (const h of this.handlers) next.addHandlers(h);
    if (!this.started) {
      this.current = next;
      this.setWatching(target);
      return;
    }
    this.pending = next;
    next.start();
    await next.waitForSync();
    this.pending = undefined;
    if (this.stopped) return void (await next.stop());
    const old = this.current;
    this.current = next;
    this.setWatching(target);
    await old.stop();
  }

  private setWatching(buckets: PodBuckets): void {
    this.watching = buckets;
    this.watchingSet = new Set(buckets === 'all' ? [] : buckets);
  }

  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
    this.current.addHandlers(h);
    this.unbucketed?.addHandlers(h);
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.indexes.push([name, fn]);
    this.current.addIndex(name, fn);
    this.unbucketed?.addIndex(name, fn);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.current.get(namespace, name) ?? this.unbucketed?.get(namespace, name);
  }

  list(): T[] {
    return this.withUnbucketed((i) => i.list());
  }

  byIndex(index: string, value: string): T[] {
    return this.withUnbucketed((i) => i.byIndex(index, value));
  }

  /** From the current informer and, unless it watches every pod already, the unbucketed one. */
  private withUnbucketed(read: (i: Informer<T>) => T[]): T[] {
    const own = read(this.current);
    return this.unbucketed && this.watching !== 'all' ? own.concat(read(this.unbucketed)) : own;
  }

  start(): void {
    this.started = true;
    this.current.start();
    this.unbucketed?.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.current.stop(), this.pending?.stop(), this.unbucketed?.stop()]);
    await this.changing;
  }

  async waitForSync(): Promise<void> {
    await Promise.all([this.current.waitForSync(), this.unbucketed?.waitForSync()]);
  }

  hasSynced(): boolean {
    return this.current.hasSynced() && (this.unbucketed?.hasSynced() ?? true);
  }

  lastSyncAge(): number {
    return Math.max(this.current.lastSyncAge(), this.unbucketed?.lastSyncAge() ?? 0);
  }

  get stats(): InformerStats {
    return this.current.stats;
  }
}

function normalize(b: PodBuckets): PodBuckets {
  return b === 'all' ? b : [...new Set(b)].sort((x, y) => x - y);
}
