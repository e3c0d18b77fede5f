/**
 * The informer's cache: objects by `namespace/name`, plus secondary indexes (e.g. pods by their
 * workflow label) kept up to date on every change, so lookups by owner are O(result) instead of a
 * scan. Pure.
 */
export interface ObjectMetaLike {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  labels?: Record<string, string>;
  deletionTimestamp?: string | Date;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMetaLike;
}

/** Index function: the index values of an object (none → not indexed). */
export type IndexFunc<T> = (obj: T) => string[];

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : `${m.name}`;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export class ObjectStore<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  /** Adds an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexFuncs.has(name)) throw new Error(`index ${name} exists`);
    this.indexFuncs.set(name, fn);
    this.indexes.set(name, new Map());
    for (const [key, obj] of this.items) this.indexOne(name, key, obj);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  values(): T[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Objects whose index `name` yields `value`. */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const obj = this.items.get(k);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Stores `obj`; returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const name of this.indexFuncs.keys()) this.indexOne(name, key, obj);
    return old;
  }

  /** Removes the object under `key`; returns it. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private indexOne(name: string, key: string, obj: T): void {
    const index = this.indexes.get(name)!;
    for (const value of this.indexFuncs.get(name)!(obj)) {
      let set = index.get(value);
      if (!set) index.set(value, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexFuncs) {
      const index = this.indexes.get(name)!;
      for (const value of fn(obj)) {
        const set = index.get(value);
        if (!set) continue;
        set.delete(key);
        if (set.size === 0) index.delete(value);
      }
    }
  }
}
