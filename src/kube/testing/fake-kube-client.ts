/**
 * An in-memory stand-in for the calls the shells make on KubeClient, for unit tests of their
 * decisions (AlreadyExists-as-success, uid preconditions, conflicts, relists) in milliseconds.
 * The kube suites keep testing the real API server; this fake copies only the semantics those
 * decisions depend on:
 *
 * - objects keyed by resource/namespace/name, each write bumping one global resourceVersion
 *   (increasing integers, as etcd-backed servers give) and create assigning a uid;
 * - refusals as real ApiErrors (src/kube/errors.ts): 404 NotFound, 409 AlreadyExists, 409 Conflict
 *   (stale resourceVersion on replace or on a patch that carries one, uid precondition on delete);
 * - JSON merge patches (RFC 7386); `status` changes only through the `status` subresource of a
 *   type that has one (`statusSubresource`), through the main resource of one that does not;
 * - list with label selectors (`k`, `k=v`, `k!=v`, comma = and), `metadata.name=` field selectors
 *   and paging; watch replays the events after its resourceVersion (or ADDED for every object
 *   when it has none), then streams live ones,
 *   bookmarks on request, 410 Expired for a resourceVersion older than the last `compact()`;
 * - fault injection: `failNext(n, code)` makes the next n matching calls fail with that status.
 *
 * It is built on the structural type `KubeCalls` (a Pick of KubeClient), so methods added to the
 * real client later do not break it. Kept out of dist/ by tsconfig.build.json (src/kube/testing).
 */
import type { KubeClient, ListOptions, ObjectList, Verb, WatchEvent, WatchOptions } from '../client.js';
import { ApiError } from '../errors.js';
import { applyMergePatch } from '../merge-patch.js';
import type { KubeObject } from '../object-store.js';
import { resourceLabel, resourcePath, type ResourceType } from '../resource.js';
import { matchesLabels } from './label-selector.js';

/** The KubeClient calls the shells make; the fake implements exactly these. */
export type KubeCalls = Pick<KubeClient, 'get' | 'list' | 'create' | 'mergePatch' | 'replace' | 'delete' | 'watch'>;

/** One call the fake answered (or refused), for assertions. */
export interface RecordedCall {
  verb: Verb;
  /** `plural[.group]`. */
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  body?: unknown;
  /** HTTP status the call ended with (200 for success). */
  code: number;
  /** `METHOD path`, as the real client names a request in its ApiErrors. */
  request: string;
}

export interface FaultFilter {
  verb?: Verb;
  /** `plural[.group]`, e.g. `pods`. */
  resource?: string;
}

interface Fault {
  remaining: number;
  code: number;
  reason: string;
  message: string;
  filter: FaultFilter;
}

interface Watcher {
  type: ResourceType;
  opts: WatchOptions;
  /** The caller's handler. */
  handler: (e: WatchEvent) => void;
  end: () => void;
}

type Obj = KubeObject & { metadata: NonNullable<KubeObject['metadata']> & Record<string, unknown> } & Record<string, unknown>;

const METHODS: Record<Verb, string> = {
  get: 'GET',
  list: 'GET',
  watch: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

export class FakeKubeClient implements KubeCalls {
  readonly calls: RecordedCall[] = [];
  private readonly objects = new Map<string, Obj>();
  /** Every change, for watches that start from an older resourceVersion. */
  private history: { rv: number; resource: string; event: WatchEvent }[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly faults: Fault[] = [];
  private rv = 1;
  private uids = 0;
  private compactedRv = 0;

  /** The real client's type, for shells that take one; only the KubeCalls methods exist. */
  asClient(): KubeClient {
    return this as unknown as KubeClient;
  }

  /** The next `times` calls matching `filter` fail with `code` (0 = transport failure). */
  failNext(times: number, code: number, filter: FaultFilter = {}, message = `injected failure ${code}`): void {
    this.faults.push({ remaining: times, code, reason: REASONS[code] ?? '', message, filter });
  }

  /** Stores an object as if someone else created it (no call recorded, watchers notified). */
  seed<T>(type: ResourceType, obj: T): T {
    return this.store(type, 'ADDED', this.fresh(type, obj as unknown as Obj)) as unknown as T;
  }

  /** A stored object (a copy), or undefined. */
  peek<T>(type: ResourceType, namespace: string | undefined, name: string): T | undefined {
    const o = this.objects.get(key(type, namespace, name));
    return o ? (structuredClone(o) as unknown as T) : undefined;
  }

  /** The current resourceVersion (that of the latest write). */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Forgets the history: watches from an older resourceVersion get 410 Expired. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (w.opts.allowWatchBookmarks)
        this.deliver(w, { type: 'BOOKMARK', object: { kind: w.type.kind, metadata: { resourceVersion: this.resourceVersion } } });
    }
  }

  /** Sends an ERROR event (a Status) to every open watch, as the server does for an expired watch. */
  watchError(code: number, reason = REASONS[code] ?? '', message = `watch error ${code}`): void {
    for (const w of [...this.watchers])
      this.deliver(w, { type: 'ERROR', object: { kind: 'Status', status: 'Failure', code, reason, message } });
  }

  /** Ends every open watch normally, as the server does at its timeoutSeconds. */
  closeWatches(): void {
    for (const w of [...this.watchers]) w.end();
  }

  /** Watches currently open. */
  get openWatches(): number {
    return this.watchers.size;
  }

  /** Recorded calls of one verb (and resource). */
  callsOf(verb: Verb, resource?: string): RecordedCall[] {
    return this.calls.filter((c) => c.verb === verb && (resource === undefined || c.resource === resource));
  }

  async get<T>(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): Promise<T> {
    const call = this.begin('get', type, namespace, name, subresource);
    return structuredClone(this.existing(type, namespace, name, call)) as unknown as T;
  }

  async list<T>(type: ResourceType, o: ListOptions = {}): Promise<ObjectList<T>> {
    this.begin('list', type, o.namespace);
    const all = [...this.objects.entries()]
      .filter(([k, obj]) => k.startsWith(`${resourceLabel(type)}|`) && this.selected(obj, o.namespace, o.labelSelector, o.fieldSelector))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => obj);
    const from = o.continue ? Number(o.continue) : 0;
    const to = o.limit ? from + o.limit : all.length;
    const items = all.slice(from, to).map((obj) => structuredClone(obj) as unknown as T);
    return { items, metadata: { resourceVersion: this.resourceVersion, ...(to < all.length ? { continue: String(to) } : {}) } };
  }

  async create<T>(type: ResourceType, namespace: string | undefined, body: unknown): Promise<T> {
    const obj = structuredClone(body) as Obj;
    const name = obj.metadata?.name;
    const call = this.begin('create', type, namespace, name, undefined, body);
    if (!name) this.refuse(call, 422, 'Invalid', `${type.kind} is invalid: metadata.name: Required value`);
    if (this.objects.has(key(type, namespace, name))) this.refuse(call, 409, 'AlreadyExists', `${type.plural} "${name}" already exists`);
    obj.metadata = { ...obj.metadata, ...(namespace ? { namespace } : {}) };
    return structuredClone(this.store(type, 'ADDED', this.fresh(type, obj))) as unknown as T;
  }

  async mergePatch<T>(type: ResourceType, namespace: string | undefined, name: string, patch: unknown, subresource?: string): Promise<T> {
    const call = this.begin('patch', type, namespace, name, subresource, patch);
    const current = this.existing(type, namespace, name, call);
    const p = (structuredClone(patch) ?? {}) as Record<string, unknown>;
    const wantedRv = (p.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (wantedRv !== undefined && wantedRv !== current.metadata.resourceVersion)
      this.refuse(call, 409, 'Conflict', conflictMessage(type, name));
    // The status subresource changes only status; the main resource everything but status
    // (everything, for a type without the subresource).
    this.statusAt(type, subresource, call);
    const effective: Record<string, unknown> = subresource === 'status' ? { status: p.status } : { ...p };
    if (subresource !== 'status' && type.statusSubresource) delete effective.status;
    const next = applyMergePatch(structuredClone(current), effective) as Obj;
    next.metadata = { ...next.metadata, name, uid: current.metadata.uid, ...(namespace ? { namespace } : {}) };
    return structuredClone(this.store(type, 'MODIFIED', next)) as unknown as T;
  }

  async replace<T>(type: ResourceType, namespace: string | undefined, name: string, body: unknown, subresource?: string): Promise<T> {
    const call = this.begin('update', type, namespace, name, subresource, body);
    const current = this.existing(type, namespace, name, call);
    const obj = structuredClone(body) as Obj;
    if (obj.metadata?.resourceVersion !== current.metadata.resourceVersion) this.refuse(call, 409, 'Conflict', conflictMessage(type, name));
    this.statusAt(type, subresource, call);
    const next =
      subresource === 'status'
        ? { ...structuredClone(current), status: obj.status }
        : { ...obj, status: type.statusSubresource ? current.status : obj.status };
    next.metadata = { ...obj.metadata, name, uid: current.metadata.uid, ...(namespace ? { namespace } : {}) };
    return structuredClone(this.store(type, 'MODIFIED', next as Obj)) as unknown as T;
  }

  async delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    options?: { uid?: string; gracePeriodSeconds?: number },
  ): Promise<unknown> {
    const call = this.begin('delete', type, namespace, name, undefined, options);
    const current = this.existing(type, namespace, name, call);
    if (options?.uid && options.uid !== current.metadata.uid) {
      this.refuse(
        call,
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    this.objects.delete(key(type, namespace, name));
    const gone = { ...current, metadata: { ...current.metadata, resourceVersion: String(++this.rv) } };
    this.emit(type, 'DELETED', gone);
    return { kind: 'Status', status: 'Success' };
  }

  /** Resolves when the signal aborts, closeWatches() runs, or a handler throws (the real stream ends then too). */
  async watch(type: ResourceType, o: WatchOptions, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    this.begin('watch', type, o.namespace, undefined, undefined, {
      resourceVersion: o.resourceVersion,
      allowWatchBookmarks: o.allowWatchBookmarks,
    });
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const since = o.resourceVersion ? Number(o.resourceVersion) : this.rv;
      const watcher: Watcher = { type, opts: o, handler: onEvent, end: () => finish() };
      const finish = (): void => {
        this.watchers.delete(watcher);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      signal.addEventListener('abort', finish, { once: true });
      o.onOpen?.();
      if (since < this.compactedRv) {
        onEvent({
          type: 'ERROR',
          object: {
            kind: 'Status',
            status: 'Failure',
            code: 410,
            reason: 'Expired',
            message: `too old resource version: ${since} (${this.compactedRv})`,
          },
        });
        return finish();
      }
      // Registered before the replay: a handler that writes must see its own write as a live event.
      this.watchers.add(watcher);
      const label = resourceLabel(type);
      // Without a resourceVersion the server starts with an ADDED event per existing object.
      if (!o.resourceVersion) {
        for (const [k, obj] of this.objects)
          if (k.startsWith(`${label}|`)) this.deliver(watcher, { type: 'ADDED', object: structuredClone(obj) });
        return;
      }
      for (const h of this.history)
        if (h.rv > since && h.resource === label && this.watchers.has(watcher)) this.deliver(watcher, structuredClone(h.event));
    });
  }

  private deliver(w: Watcher, e: WatchEvent): void {
    if (
      e.type !== 'BOOKMARK' &&
      e.type !== 'ERROR' &&
      !this.selected(e.object as Obj, w.opts.namespace, w.opts.labelSelector, w.opts.fieldSelector)
    )
      return;
    try {
      w.handler(e);
    } catch {
      w.end();
    }
  }

  /** A write to `…/status` of a type without that subresource is a 404, as the API server answers. */
  private statusAt(type: ResourceType, subresource: string | undefined, call: RecordedCall): void {
    if (subresource === 'status' && !type.statusSubresource)
      this.refuse(call, 404, 'NotFound', `the server could not find the requested resource (${type.plural}/status)`);
  }

  private begin(verb: Verb, type: ResourceType, namespace?: string, name?: string, subresource?: string, body?: unknown): RecordedCall {
    const path = resourcePath(type, namespace, verb === 'list' || verb === 'watch' || verb === 'create' ? undefined : name, subresource);
    const call: RecordedCall = {
      verb,
      resource: resourceLabel(type),
      namespace,
      name,
      subresource,
      body,
      code: 200,
      request: `${METHODS[verb]} ${path}`,
    };
    this.calls.push(call);
    const fault = this.faults.find(
      (f) => f.remaining > 0 && (!f.filter.verb || f.filter.verb === verb) && (!f.filter.resource || f.filter.resource === call.resource),
    );
    if (fault) {
      fault.remaining--;
      this.refuse(call, fault.code, fault.reason, fault.message);
    }
    return call;
  }

  private refuse(call: RecordedCall, code: number, reason: string, message: string): never {
    call.code = code;
    throw new ApiError(code, reason, message, call.request);
  }

  private existing(type: ResourceType, namespace: string | undefined, name: string, call: RecordedCall): Obj {
    const obj = this.objects.get(key(type, namespace, name));
    if (obj) return obj;
    return this.refuse(call, 404, 'NotFound', `${resourceLabel(type)} "${name}" not found`);
  }

  /** Fills in what the server sets on create. */
  private fresh(type: ResourceType, obj: Obj): Obj {
    const o = structuredClone(obj);
    o.metadata = { ...o.metadata, uid: `uid-${++this.uids}`, creationTimestamp: new Date().toISOString() };
    o.apiVersion ??= type.group ? `${type.group}/${type.version}` : type.version;
    o.kind ??= type.kind;
    return o;
  }

  private store(type: ResourceType, kind: 'ADDED' | 'MODIFIED', obj: Obj): Obj {
    obj.metadata.resourceVersion = String(++this.rv);
    this.objects.set(key(type, obj.metadata.namespace, obj.metadata.name!), obj);
    this.emit(type, kind, obj);
    return obj;
  }

  private emit(type: ResourceType, kind: WatchEvent['type'], obj: Obj): void {
    const event: WatchEvent = { type: kind, object: structuredClone(obj) };
    this.history.push({ rv: this.rv, resource: resourceLabel(type), event });
    for (const w of [...this.watchers]) if (resourceLabel(w.type) === resourceLabel(type)) this.deliver(w, structuredClone(event));
  }

  private selected(obj: Obj, namespace?: string, labelSelector?: string, fieldSelector?: string): boolean {
    if (namespace && obj.metadata?.namespace !== namespace) return false;
    if (labelSelector && !matchesLabels(obj.metadata?.labels ?? {}, labelSelector)) return false;
    if (fieldSelector) {
      for (const term of fieldSelector.split(',')) {
        const [field, value] = term.split('=');
        if (field !== 'metadata.name') throw new Error(`FakeKubeClient: field selector ${term} not supported`);
        if (obj.metadata?.name !== value) return false;
      }
    }
    return true;
  }
}

function key(type: ResourceType, namespace: string | undefined, name: string): string {
  return `${resourceLabel(type)}|${type.namespaced ? (namespace ?? '') : ''}|${name}`;
}

function conflictMessage(type: ResourceType, name: string): string {
  return `Operation cannot be fulfilled on ${type.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`;
}
