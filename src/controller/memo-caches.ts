/**
 * The memoize caches (src/engine/memoize.ts decides, this executes): ConfigMaps labelled
 * `workflows.plugflow.io/configmap-type: Cache`, watched through one label-selected informer so a
 * reconcile reads them from memory, and written by `saveMemo` with a read-modify-write that is
 * conditional on the resourceVersion (two workflows saving into one cache at once both land).
 *
 * Only labelled ConfigMaps are ever read or changed: a workflow naming some other ConfigMap as its
 * cache (the artifact repositories, a plugin's) gets an error naming the field instead of
 * reading or overwriting it. A missing cache is created with the label.
 *
 * A ConfigMap holds at most ~1 MiB; when an entry does not fit, the oldest entries are evicted
 * (said in the log, naming them); an entry that alone is too large is not stored (logged).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Workflow } from '../api/index.js';
import { LABEL_CONFIGMAP_TYPE } from '../api/index.js';
import type { EngineAction, MemoCacheObservation, MemoEntry } from '../engine/index.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import type { Informer } from '../kube/informer.js';
import { typedConfigMapInformer, type TypedConfigMapOptions } from './typed-config-maps.js';
import { CONFIGMAPS } from '../kube/resource.js';

/** The label value that makes a ConfigMap a memoize cache (the peer's `configmap-type: Cache`). */
export const CONFIGMAP_TYPE_CACHE = 'Cache';

/** Data bytes a cache may hold: below the API server's 1 MiB object limit, with room for metadata. */
export const MAX_CACHE_BYTES = 900 * 1024;

/** How long a ConfigMap found unusable as a cache is reported so, before it is looked at again. */
const PROBLEM_TTL_MS = 30_000;

type SaveMemo = Extract<EngineAction, { kind: 'saveMemo' }>;

export interface MemoCachesOptions extends TypedConfigMapOptions {
  now?: () => number;
}

export class MemoCaches {
  readonly informer: Informer<V1ConfigMap>;
  private readonly parsed = new WeakMap<V1ConfigMap, Record<string, MemoEntry>>();
  private readonly problems = new Map<string, { message: string; at: number }>();
  /** Caches the informer does not hold that were looked up (missing, or not labelled), and when. */
  private readonly verified = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly opts: MemoCachesOptions) {
    this.now = opts.now ?? Date.now;
    this.informer = typedConfigMapInformer(opts, CONFIGMAP_TYPE_CACHE);
  }

  /** The cache `name` of namespace `ns` as the engine sees it (a missing one is empty). */
  observe(ns: string, name: string): MemoCacheObservation {
    const cm = this.informer.get(ns, name);
    if (!cm) {
      // Not labelled as a cache (the informer holds only those): a problem if it exists.
      const problem = this.problems.get(`${ns}/${name}`);
      return problem ? { problem: problem.message } : { entries: {} };
    }
    let entries = this.parsed.get(cm);
    if (!entries) {
      entries = parseEntries(cm.data);
      this.parsed.set(cm, entries);
    }
    return { entries };
  }

  /**
   * Looks up the caches `names` of `ns` that the informer does not hold (at most every 30 s each):
   * a ConfigMap of that name without the cache label makes the memoized nodes fail naming it
   * before anything runs, instead of running and then not being stored.
   */
  async verify(ns: string, names: readonly string[]): Promise<void> {
    for (const name of names) {
      const key = `${ns}/${name}`;
      if (this.informer.get(ns, name)) continue;
      const at = this.verified.get(key);
      if (at !== undefined && this.now() - at < PROBLEM_TTL_MS) continue;
      let cm: V1ConfigMap | undefined;
      try {
        cm = await this.opts.client.get<V1ConfigMap>(CONFIGMAPS, ns, name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.verified.set(key, this.now());
      if (this.verified.size > 10_000) this.verified.delete(this.verified.keys().next().value as string);
      if (cm && !isCache(cm)) this.problems.set(key, { message: notACache(ns, name), at: this.now() });
      else this.problems.delete(key);
    }
  }

  /** Applies `saveMemo`: stores the entry unless the cache holds a newer one for the key. */
  async save(wf: Workflow, a: SaveMemo): Promise<void> {
    const ns = wf.metadata.namespace!;
    const json = JSON.stringify(a.entry);
    const where = `memoize cache ConfigMap ${ns}/${a.cacheName}`;
    if (Buffer.byteLength(a.key) + Buffer.byteLength(json) > MAX_CACHE_BYTES) {
      this.opts.log.warn(`${where}: entry ${a.key} not stored: ${json.length} bytes of outputs do not fit a ConfigMap`, {
        workflow: `${ns}/${wf.metadata.name}`,
      });
      return;
    }
    for (let attempt = 0; attempt < 8; attempt++) {
      let cm: V1ConfigMap;
      try {
        cm = await this.opts.client.get<V1ConfigMap>(CONFIGMAPS, ns, a.cacheName);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        try {
          await this.opts.client.create(CONFIGMAPS, ns, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: a.cacheName, labels: { [LABEL_CONFIGMAP_TYPE]: CONFIGMAP_TYPE_CACHE } },
            data: { [a.key]: json },
          });
          this.opts.log.info(`${where} created for entry ${a.key}`, { workflow: `${ns}/${wf.metadata.name}` });
          return;
        } catch (createErr) {
          if (isAlreadyExists(createErr)) continue;
          throw createErr;
        }
      }
      if (!isCache(cm)) {
        const message = notACache(ns, a.cacheName);
        this.problems.set(`${ns}/${a.cacheName}`, { message, at: this.now() });
        this.opts.log.warn(`${where}: entry ${a.key} not stored: ${message}`, { workflow: `${ns}/${wf.metadata.name}` });
        return;
      }
      this.problems.delete(`${ns}/${a.cacheName}`);
      const data: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, cm.data ?? {});
      const held = parseEntry(data[a.key]);
      if (held && (held.nodeID === a.entry.nodeID || held.creationTimestamp >= a.entry.creationTimestamp)) return;
      data[a.key] = json;
      const evicted = evictOldest(data, a.key);
      if (evicted.length > 0) {
        this.opts.log.info(`${where} is full (${MAX_CACHE_BYTES} bytes): evicted the oldest entries ${evicted.join(', ')} for ${a.key}`, {
          workflow: `${ns}/${wf.metadata.name}`,
        });
      }
      try {
        await this.opts.client.replace(CONFIGMAPS, ns, a.cacheName, { ...cm, data: { ...data } });
        return;
      } catch (err) {
        if (isConflict(err)) continue;
        throw err;
      }
    }
    throw new Error(`${where}: entry ${a.key} not stored: the ConfigMap kept changing (8 conflicting writes)`);
  }

  /** Why a save could not be applied is remembered per cache; for tests and readiness. */
  problemOf(ns: string, name: string): string | undefined {
    return this.problems.get(`${ns}/${name}`)?.message;
  }
}

function isCache(cm: V1ConfigMap): boolean {
  return cm.metadata?.labels?.[LABEL_CONFIGMAP_TYPE] === CONFIGMAP_TYPE_CACHE;
}

function notACache(ns: string, name: string): string {
  return `ConfigMap ${ns}/${name} exists and is not a memoize cache: it lacks the label ${LABEL_CONFIGMAP_TYPE}=${CONFIGMAP_TYPE_CACHE} (plugflow reads and writes no other ConfigMap as a cache); label it or name another cache`;
}

/** The entries of a cache's data; values that are not entries (hand-edited, foreign) are left out. */
export function parseEntries(data: Record<string, string> | undefined): Record<string, MemoEntry> {
  const out = Object.create(null) as Record<string, MemoEntry>;
  for (const [key, value] of Object.entries(data ?? {})) {
    const entry = parseEntry(value);
    if (entry) out[key] = entry;
  }
  return out;
}

function parseEntry(value: string | undefined): MemoEntry | undefined {
  if (typeof value !== 'string') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.nodeID !== 'string' || typeof o.creationTimestamp !== 'string' || Number.isNaN(Date.parse(o.creationTimestamp)))
    return undefined;
  const outputs = o.outputs && typeof o.outputs === 'object' && !Array.isArray(o.outputs) ? (o.outputs as MemoEntry['outputs']) : {};
  return {
    nodeID: o.nodeID,
    outputs,
    creationTimestamp: o.creationTimestamp,
    lastHitTimestamp: typeof o.lastHitTimestamp === 'string' ? o.lastHitTimestamp : o.creationTimestamp,
  };
}

/**
 * Removes the oldest entries (by creationTimestamp; unreadable values first) until the data fits
 * MAX_CACHE_BYTES, never `keep`. Returns the keys removed.
 */
export function evictOldest(data: Record<string, string>, keep: string): string[] {
  let size = 0;
  for (const [k, v] of Object.entries(data)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  if (size <= MAX_CACHE_BYTES) return [];
  const order = Object.entries(data)
    .filter(([k]) => k !== keep)
    .map(([k, v]) => ({ k, v, at: parseEntry(v)?.creationTimestamp ?? '' }))
    .sort((x, y) => x.at.localeCompare(y.at) || x.k.localeCompare(y.k));
  const evicted: string[] = [];
  for (const { k, v } of order) {
    if (size <= MAX_CACHE_BYTES) break;
    delete data[k];
    size -= Buffer.byteLength(k) + Buffer.byteLength(v);
    evicted.push(k);
  }
  return evicted;
}
