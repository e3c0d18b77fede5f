/**
 * Semaphore limits, read from the ConfigMap key each semaphore names (`<ns>/ConfigMap/<cm>/<key>`)
 * with a GET — no ConfigMap informer, because semaphore ConfigMaps carry no label to select them
 * by and watching every ConfigMap of the cluster would cost far more than the few reads this does.
 *
 * A limit is read when a workflow first waits for the semaphore and again, while anybody waits
 * for it, at most every `refreshMs` (synchronizer.ts drives the refresh), so raising the limit
 * admits waiters within about a second. At most `maxPerRefresh` semaphores are read per round
 * (round robin), so a workflow naming thousands of semaphores cannot flood the API server.
 *
 * A semaphore names a key of a ConfigMap in the workflow's own namespace, read with the
 * controller's rights (as the peer does): of that value, only a whole number of up to nine
 * digits is ever used or shown (as the limit); anything else is reported as "not a limit",
 * never echoed, so naming a key cannot read it.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import { ApiError, isNotFound } from '../kube/errors.js';
import { CONFIGMAPS } from '../kube/resource.js';
import { parseLockKey } from '../engine/index.js';
import type { LockLimit } from './lock-table.js';

const WHOLE_NUMBER = /^\s*\d{1,9}\s*$/;

export class SemaphoreLimits {
  private readonly known = new Map<string, { limit: LockLimit; at: number }>();
  private cursor = 0;

  constructor(
    private readonly client: Pick<KubeClient, 'get'>,
    private readonly opts: { refreshMs?: number; maxPerRefresh?: number; now?: () => number } = {},
  ) {}

  /** The limit last read, or undefined when it was never read. */
  get(lock: string): LockLimit | undefined {
    return this.known.get(lock)?.limit;
  }

  /** Reads the limits of `locks` never read yet. */
  async ensure(locks: Iterable<string>): Promise<void> {
    const missing = [...locks].filter((l) => parseLockKey(l)?.kind === 'semaphore' && !this.known.has(l));
    await Promise.all(missing.map((l) => this.read(l)));
  }

  /** Reads again (round robin, bounded) the limits of `locks` older than refreshMs; true if one changed. */
  async refresh(locks: readonly string[]): Promise<boolean> {
    const now = (this.opts.now ?? Date.now)();
    const due = locks.filter((l) => now - (this.known.get(l)?.at ?? 0) >= (this.opts.refreshMs ?? 1000));
    const max = this.opts.maxPerRefresh ?? 50;
    const start = due.length > max ? this.cursor++ % due.length : 0;
    const batch = due.length > max ? [...due, ...due].slice(start, start + max) : due;
    const before = batch.map((l) => JSON.stringify(this.known.get(l)?.limit));
    await Promise.all(batch.map((l) => this.read(l)));
    const changed = batch.some((l, i) => JSON.stringify(this.known.get(l)?.limit) !== before[i]);
    // Semaphores nobody waits for or holds are read again when they are next needed.
    if (this.known.size > 10_000) for (const k of [...this.known.keys()].slice(0, this.known.size - 10_000)) this.known.delete(k);
    return changed;
  }

  private async read(lock: string): Promise<void> {
    const parsed = parseLockKey(lock);
    if (parsed?.kind !== 'semaphore') return;
    const where = `ConfigMap ${parsed.namespace}/${parsed.configMap}`;
    let limit: LockLimit;
    try {
      const cm = await this.client.get<V1ConfigMap>(CONFIGMAPS, parsed.namespace, parsed.configMap);
      const value = cm.data?.[parsed.key];
      if (value === undefined) limit = { problem: `${where} has no key ${JSON.stringify(parsed.key)} holding the semaphore's limit` };
      else if (!WHOLE_NUMBER.test(value))
        limit = {
          // Never the value itself: the controller reads the key with its own rights, and a
          // workflow naming any key of its namespace must learn no more than "not a limit".
          problem: `${where} key ${JSON.stringify(parsed.key)} does not hold a whole number of holders (a limit such as "3")`,
        };
      else limit = { limit: Number(value.trim()) };
    } catch (err) {
      if (isNotFound(err)) limit = { problem: `${where}, which holds the semaphore's limit, does not exist` };
      else if (err instanceof ApiError && (err.code === 401 || err.code === 403))
        limit = { problem: `${where} cannot be read by the controller: ${err.message}` };
      else throw err;
    }
    this.known.set(lock, { limit, at: (this.opts.now ?? Date.now)() });
  }
}
