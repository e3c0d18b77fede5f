/**
 * A resilient list+watch cache of one resource (optionally one namespace and a label selector),
 * in the spirit of client-go's reflector + shared informer, built for a controller that must keep
 * working through API server restarts and network trouble:
 *
 * - list (paged), then watch from the list's resourceVersion with bookmarks on;
 * - any watch failure or close → watch again from the last seen resourceVersion, with exponential
 *   backoff on failures; a 410 Gone (or an ERROR event with 410/Expired) → list again;
 * - a watchdog restarts a watch that stayed silent longer than `watchdogMs` — with bookmarks on,
 *   the API server sends something about once a minute, so silence means a dead connection
 *   that TCP has not noticed (a half-open socket, a stopped server);
 * - a periodic resync re-delivers every cached object as an update, so a reconcile that was
 *   dropped or went wrong is retried even when nothing changes;
 * - `hasSynced()` after the first full list; `lastSyncAge()` (time since the last sign of life:
 *   a list, a watch start, an event or a bookmark) lets /readyz fail when the cache is stale
 *   (`readinessProblem`, used by the controller's and the server's /readyz alike);
 * - `onFailure` sees every failed list or watch, for a caller that must give up on a refusal.
 */
import type { Logger } from '../log/logger.js';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff.js';
import type { KubeClient, WatchEvent } from './client.js';
import { ApiError, isGone } from './errors.js';
import { ObjectStore, objectKey, type IndexFunc, type KubeObject } from './object-store.js';
import type { ResourceType } from './resource.js';
import { errorMessage } from '../log/error-message.js';

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  /** Also called by resync with old === obj. */
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T> {
  /** Only list and watch are used (so a test can hand in an in-memory fake). */
  client: Pick<KubeClient, 'list' | 'watch'>;
  type: ResourceType;
  /** Watch one namespace; all namespaces when undefined. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Re-deliver the whole cache as updates this often; 0 turns resync off. Default 5 min. */
  resyncMs?: number;
  /** Restart a watch that has been silent this long. Default 150 s (bookmarks come every ~60 s). */
  watchdogMs?: number;
  /** Server-side timeout of each watch request; randomised 5–10 min by default. */
  watchTimeoutSeconds?: number;
  /** Backoff between failed lists/watches. Default 200 ms doubling to 10 s, 20 % jitter. */
  backoff?: BackoffPolicy;
  /** Page size of lists. Default 500. */
  pageSize?: number;
  /** Shrinks objects before they are cached (e.g. drop managedFields). */
  transform?: (obj: T) => T;
  /** Called with every failed list or watch (before the retry); the informer retries regardless. */
  onFailure?: (err: unknown) => void;
  log?: Logger;
}

export interface InformerStats {
  lists: number;
  watches: number;
  /** Watches that ended with an error (not the server's normal timeout close). */
  watchErrors: number;
  /** Relists caused by 410 Gone. */
  relistsOnGone: number;
  /** Watches restarted by the watchdog. */
  watchdogRestarts: number;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 10_000, jitter: 0.2 };

/** Default of `watchdogMs`: bookmarks come about every 60 s, so 150 s of silence means a dead watch. */
export const DEFAULT_WATCHDOG_MS = 150_000;

/** How long an informer may stay silent before /readyz fails: two watchdog periods, so one restart is allowed for. */
export function staleAfterMs(watchdogMs = DEFAULT_WATCHDOG_MS): number {
  return 2 * watchdogMs;
}

/**
 * Why /readyz must not trust an informer's cache, or undefined when it may: not synced yet, or
 * nothing heard from the API server for longer than `staleMs` (a frozen server or a dead
 * connection the watchdog has not managed to replace).
 */
export function readinessProblem(
  name: string,
  informer: Pick<InformerLike, 'hasSynced' | 'lastSyncAge'>,
  staleMs: number,
): string | undefined {
  if (!informer.hasSynced()) return `informer ${name} has not synced yet`;
  const age = informer.lastSyncAge();
  if (age > staleMs) return `informer ${name} is stale: nothing heard from the API server for ${Math.round(age / 1000)}s`;
  return undefined;
}

/** The type-independent face of an informer: lifecycle and health, for readiness and metrics. */
export interface InformerLike {
  start(): void;
  stop(): Promise<void>;
  waitForSync(): Promise<void>;
  hasSynced(): boolean;
  lastSyncAge(): number;
  readonly stats: InformerStats;
}

/** Raised inside the loop to leave a watch and list again. */
class RelistNeeded extends Error {}

export class Informer<T extends KubeObject> implements InformerLike {
  readonly store = new ObjectStore<T>();
  readonly stats: InformerStats = { lists: 0, watches: 0, watchErrors: 0, relistsOnGone: 0, watchdogRestarts: 0 };
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly stopper = new AbortController();
  private running?: Promise<void>;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private resourceVersion = '';
  private lastContact = 0;
  private resyncTimer?: NodeJS.Timeout;
  private readonly name: string;

  constructor(private readonly opts: InformerOptions<T>) {
    // A selector of many values (a replica's shard buckets) is shortened for the log lines.
    const selector = opts.labelSelector && opts.labelSelector.length > 100 ? `${opts.labelSelector.slice(0, 97)}…` : opts.labelSelector;
    this.name = `${opts.type.plural}${opts.namespace ? ` in ${opts.namespace}` : ''}${selector ? ` (${selector})` : ''}`;
  }

  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    this.store.addIndex(name, fn);
  }

  /** Starts listing and watching in the background. */
  start(): void {
    if (this.running) return;
    this.running = this.run();
    const resync = this.opts.resyncMs ?? 300_000;
    if (resync > 0) this.resyncTimer = setInterval(() => this.resync(), resync);
  }

  /** Stops watching; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopper.abort();
    clearInterval(this.resyncTimer);
    await this.running;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Milliseconds since the last sign of life from the server; Infinity before the first list. */
  lastSyncAge(): number {
    return this.synced ? Date.now() - this.lastContact : Infinity;
  }

  /** Resolves once the first list is in the cache (or the informer is stopped). */
  waitForSync(): Promise<void> {
    if (this.synced || this.stopper.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): T[] {
    return this.store.values();
  }

  byIndex(index: string, value: string): T[] {
    return this.store.byIndex(index, value);
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    let failures = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.listAll();
          needList = false;
        }
        const startedAt = Date.now();
        const sawEvents = await this.watchOnce();
        // A clean close (the server's timeoutSeconds) is normal; a watch that closes at once
        // without a single event is treated as a failure so a misbehaving server is not hammered.
        if (sawEvents || Date.now() - startedAt > 1000) failures = 0;
        else await sleep(backoffDelay(this.opts.backoff ?? DEFAULT_BACKOFF, ++failures), signal);
      } catch (err) {
        if (signal.aborted) break;
        this.opts.onFailure?.(err);
        if (err instanceof RelistNeeded || isGone(err)) {
          this.stats.relistsOnGone++;
          this.opts.log?.info('informer relists: resource version expired', { informer: this.name });
          needList = true;
          continue;
        }
        failures++;
        if (!needList) this.stats.watchErrors++;
        const delay = backoffDelay(this.opts.backoff ?? DEFAULT_BACKOFF, failures);
        this.opts.log?.warn('informer watch failed; retrying', {
          informer: this.name,
          error: errorMessage(err),
          retryInMs: delay,
          failures,
        });
        await sleep(delay, signal);
      }
    }
  }

  /** Lists every page and replaces the cache, delivering the differences as events. */
  private async listAll(): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv: string;
    do {
      const page = await this.opts.client.list<T>(this.opts.type, {
        namespace: this.opts.namespace,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        limit: this.opts.pageSize ?? 500,
        continue: cont,
      });
      items.push(...page.items);
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? '';
    } while (cont && !this.stopper.signal.aborted);
    this.stats.lists++;
    this.replace(items.map((o) => this.shape(o)));
    this.resourceVersion = rv;
    this.lastContact = Date.now();
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** One watch request; true when at least one event arrived. Throws RelistNeeded on 410. */
  private async watchOnce(): Promise<boolean> {
    const abort = new AbortController();
    const onStop = (): void => abort.abort();
    this.stopper.signal.addEventListener('abort', onStop, { once: true });
    let sawEvents = false;
    let failure: Error | undefined;
    let lastHeard = Date.now();
    const watchdogMs = this.opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastHeard > watchdogMs) {
          this.stats.watchdogRestarts++;
          this.opts.log?.warn('informer watch silent too long; restarting it', { informer: this.name, silentMs: Date.now() - lastHeard });
          abort.abort();
        }
      },
      Math.max(50, Math.min(5_000, watchdogMs / 4)),
    );
    const onEvent = (e: WatchEvent): void => {
      if (failure) return;
      lastHeard = Date.now();
      this.lastContact = lastHeard;
      try {
        sawEvents = this.apply(e) || sawEvents;
      } catch (err) {
        failure = err as Error;
        abort.abort();
      }
    };
    try {
      this.stats.watches++;
      const timeoutSeconds = this.opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
      await this.opts.client.watch(
        this.opts.type,
        {
          namespace: this.opts.namespace,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
          resourceVersion: this.resourceVersion,
          timeoutSeconds,
          allowWatchBookmarks: true,
          onOpen: () => {
            lastHeard = Date.now();
            this.lastContact = lastHeard;
          },
        },
        onEvent,
        abort.signal,
      );
      lastHeard = Date.now();
    } finally {
      clearInterval(watchdog);
      this.stopper.signal.removeEventListener('abort', onStop);
    }
    if (failure) throw failure;
    return sawEvents;
  }

  /** Applies one watch event to the cache; returns true for object events. */
  private apply(e: WatchEvent): boolean {
    if (e.type === 'ERROR') {
      const status = e.object as { code?: number; reason?: string; message?: string };
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') throw new RelistNeeded(status.message);
      throw new ApiError(status.code ?? 0, status.reason ?? '', status.message ?? 'watch error event', `WATCH ${this.opts.type.plural}`);
    }
    const rv = (e.object as KubeObject).metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (e.type === 'BOOKMARK') return false;
    const obj = this.shape(e.object as T);
    if (e.type === 'DELETED') {
      const old = this.store.delete(objectKey(obj));
      this.emit((h) => h.onDelete?.(old ?? obj));
    } else {
      const old = this.store.set(obj);
      if (old) this.emit((h) => h.onUpdate?.(old, obj));
      else this.emit((h) => h.onAdd?.(obj));
    }
    return true;
  }

  /** Swaps in a fresh list: adds, updates (changed resourceVersion) and deletes as events. */
  private replace(items: T[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.store.set(obj);
      if (!old) this.emit((h) => h.onAdd?.(obj));
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit((h) => h.onUpdate?.(old, obj));
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key)!;
      this.emit((h) => h.onDelete?.(old));
    }
  }

  private resync(): void {
    if (!this.synced || this.stopper.signal.aborted) return;
    for (const obj of this.store.values()) this.emit((h) => h.onUpdate?.(obj, obj));
  }

  private shape(obj: T): T {
    return this.opts.transform ? this.opts.transform(obj) : obj;
  }

  private emit(call: (h: InformerHandlers<T>) => void): void {
    for (const h of this.handlers) {
      try {
        call(h);
      } catch (err) {
        this.opts.log?.error('informer handler failed', { informer: this.name, error: errorMessage(err) });
      }
    }
  }
}

/** A transform that drops managedFields: they are large and no controller logic reads them. */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (meta?.managedFields) delete meta.managedFields;
  return obj;
}
