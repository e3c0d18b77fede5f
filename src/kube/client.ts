/**
 * THE Kubernetes client of plugflow: the controller, the server, the agent, the CLI and the
 * tools all reach the API server through it. JSON over keep-alive connection pools, merge
 * patches, server-side apply, streaming watches and logs, and one hook that sees every
 * request's verb, resource, status and duration (the controller's API metrics).
 *
 * Every call is made as an identity: the client's own (its kubeconfig: token, token file, exec
 * plugin, client certificate, in-cluster service account) or, through `as(identity)`, a caller's
 * bearer token used as-is (the server's client mode, so the API server's RBAC decides), or a
 * service account the client impersonates (resource templates act with the workflow's account's
 * rights). Every view has the same typed interface, so there is one way to make a call.
 *
 * Why client-node is still a dependency, and only for this: the user asked for that library,
 * and its KubeConfig loader (kubeconfig files, contexts, exec plugins — for the cases
 * src/kube/kube-access.ts does not read itself) and its types (V1Pod, …) are what we use of it. Requests go through undici because client-node's
 * generated API classes (CoreV1Api, CustomObjectsApi, …) build a new HTTP agent, hence a new TLS
 * connection, for every call, and their errors need per-call parsing; here every non-2xx reply
 * is one ApiError (src/kube/errors.ts).
 */
import type { Dispatcher } from 'undici';
import { ApiError, toApiError, transportMessage } from './errors.js';
import {
  withQuery,
  writeQuery,
  type DeleteOptions,
  type ListOptions,
  type ObjectList,
  type Query,
  type WatchEvent,
  type WatchOptions,
  type WriteOptions,
} from './request-options.js';
import type { KubeAccess } from './kube-access.js';
import { readWatchEvents } from './watch-stream.js';
import { connectionPools, type Shared } from './connection-pools.js';
import { explainImpersonationRefusal, kubeconfigAuthorization } from './auth-headers.js';
import { PODS, resourceLabel, resourcePath, type ResourceType } from './resource.js';

export type { DeleteOptions, ListOptions, ObjectList, WatchEvent, WatchOptions, WriteOptions } from './request-options.js';
export { OWN_IDENTITY, WRITE_VERBS, type Identity, type KubeClientOptions, type RequestRecord, type Verb } from './request-options.js';
import { OWN_IDENTITY, type Identity, type KubeClientOptions, type Verb } from './request-options.js';

interface Call {
  verb: Verb;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  type: ResourceType;
  subresource?: string;
  path: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
}

const AUTH_TTL_MS = 60_000;
export const MERGE_PATCH = 'application/merge-patch+json';
/** Server-side apply; JSON is YAML, so the body is sent as JSON. */
export const APPLY_PATCH = 'application/apply-patch+yaml';

export class KubeClient {
  private constructor(
    readonly baseUrl: string,
    private readonly kc: KubeAccess,
    private readonly pool: Dispatcher,
    private readonly watchPool: Dispatcher,
    private readonly opts: KubeClientOptions,
    /** Who this view's calls are made as. */
    readonly identity: Identity,
    private readonly shared: Shared,
  ) {}

  /** A client for the kubeconfig's current cluster and user (its own identity). */
  static async fromKubeConfig(kc: KubeAccess, opts: KubeClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const shared = await connectionPools(kc, opts.connections ?? 32);
    return new KubeClient(cluster.server.replace(/\/+$/, ''), kc, shared.own.pool, shared.own.watchPool, opts, OWN_IDENTITY, shared);
  }

  /**
   * The same client acting as `identity`: the same typed calls, made with the caller's token
   * (or, for OWN_IDENTITY, this client's own credentials). Cheap (no pool, no cache), so a view
   * is made per request and holds exactly one token: one caller's token can never be used for
   * another caller's call or for the client's own.
   */
  as(identity: Identity): KubeClient {
    const own = this.shared.own;
    if (identity.kind === 'own' && this.identity.kind === 'own') return this;
    if (identity.kind === 'own')
      return new KubeClient(this.baseUrl, this.kc, own.pool, own.watchPool, this.opts, OWN_IDENTITY, this.shared);
    if (identity.kind === 'serviceAccount') {
      if (!identity.namespace || !identity.name) throw new Error('an impersonated service account needs a namespace and a name');
      return new KubeClient(this.baseUrl, this.kc, own.pool, own.watchPool, this.opts, { ...identity }, this.shared);
    }
    if (!identity.token) throw new Error('a caller identity needs a non-empty bearer token');
    const { pool, watchPool } = this.shared.callers;
    return new KubeClient(this.baseUrl, this.kc, pool, watchPool, this.opts, { kind: 'token', token: identity.token }, this.shared);
  }

  get<T>(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): Promise<T> {
    return this.call<T>({ verb: 'get', method: 'GET', type, subresource, path: resourcePath(type, namespace, name, subresource) });
  }

  list<T>(type: ResourceType, o: ListOptions = {}): Promise<ObjectList<T>> {
    return this.call<ObjectList<T>>({
      verb: 'list',
      method: 'GET',
      type,
      path: resourcePath(type, o.namespace),
      query: {
        labelSelector: o.labelSelector,
        fieldSelector: o.fieldSelector,
        limit: o.limit,
        continue: o.continue,
        resourceVersion: o.resourceVersion,
      },
    });
  }

  /** POST; `dryRun` asks the API server to validate and admit without storing (`dryRun=All`). */
  create<T>(type: ResourceType, namespace: string | undefined, body: unknown, options?: WriteOptions): Promise<T> {
    return this.call<T>({ verb: 'create', method: 'POST', type, path: resourcePath(type, namespace), body, query: writeQuery(options) });
  }

  /** Server-side apply of a whole object as `fieldManager`; `force` takes over fields others own. */
  apply<T>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    o: { fieldManager: string; force?: boolean } & WriteOptions,
  ): Promise<T> {
    return this.call<T>({
      verb: 'patch',
      method: 'PATCH',
      type,
      path: resourcePath(type, namespace, name),
      query: { fieldManager: o.fieldManager, force: o.force ? true : undefined, ...writeQuery(o) },
      body,
      contentType: APPLY_PATCH,
    });
  }

  /** JSON merge patch (RFC 7386). A `metadata.resourceVersion` in the patch makes it conditional. */
  mergePatch<T>(type: ResourceType, namespace: string | undefined, name: string, patch: unknown, subresource?: string): Promise<T> {
    return this.patchWith<T>(type, namespace, name, patch, MERGE_PATCH, undefined, subresource);
  }

  /**
   * A patch of any type (`application/merge-patch+json`, `application/strategic-merge-patch+json`,
   * `application/json-patch+json`), with optional query parameters (`fieldValidation`, `dryRun`).
   */
  patch<T>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    contentType: string,
    options?: WriteOptions,
  ): Promise<T> {
    return this.patchWith<T>(type, namespace, name, patch, contentType, options);
  }

  private patchWith<T>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    contentType: string,
    options?: WriteOptions,
    subresource?: string,
  ): Promise<T> {
    const path = resourcePath(type, namespace, name, subresource);
    return this.call<T>({ verb: 'patch', method: 'PATCH', type, subresource, path, body, contentType, query: writeQuery(options) });
  }

  /** PUT: replaces the object; its `metadata.resourceVersion` must be current (409 otherwise). */
  replace<T>(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    subresource?: string,
    options?: WriteOptions,
  ): Promise<T> {
    return this.call<T>({
      verb: 'update',
      method: 'PUT',
      type,
      subresource,
      path: resourcePath(type, namespace, name, subresource),
      body,
      query: writeQuery(options),
    });
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options?: DeleteOptions): Promise<unknown> {
    const body: Record<string, unknown> = {};
    const { uid, resourceVersion } = options ?? {};
    if (uid || resourceVersion) body.preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
    if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options?.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    return this.call({
      verb: 'delete',
      method: 'DELETE',
      type,
      path: resourcePath(type, namespace, name),
      body: Object.keys(body).length ? body : undefined,
    });
  }

  /**
   * Streams a watch until the server closes it (resolves), the signal aborts (resolves) or the
   * transport fails / the server refuses (rejects with ApiError). `onEvent` sees every line,
   * including BOOKMARK and ERROR events; the caller decides what they mean.
   */
  async watch(type: ResourceType, o: WatchOptions, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const query: Query = {
      watch: 1,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      resourceVersion: o.resourceVersion,
      timeoutSeconds: o.timeoutSeconds,
      allowWatchBookmarks: o.allowWatchBookmarks ? true : undefined,
    };
    const path = resourcePath(type, o.namespace);
    const started = Date.now();
    let res: Dispatcher.ResponseData;
    try {
      res = await this.watchPool.request({
        origin: this.baseUrl,
        path: withQuery(path, query),
        method: 'GET',
        headers: { ...(await this.authHeaders()), accept: 'application/json', 'user-agent': this.userAgent() },
        signal,
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: 0,
      });
    } catch (err) {
      if (signal.aborted) return;
      this.record('watch', type, undefined, 0, started);
      throw new ApiError(0, '', transportMessage(err), `WATCH ${path}`);
    }
    this.record('watch', type, undefined, res.statusCode, started);
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      throw toApiError(res.statusCode, text, `WATCH ${path}`);
    }
    o.onOpen?.();
    await readWatchEvents(res.body, onEvent, `WATCH ${path}`, signal);
  }

  /**
   * A container's log as a stream of chunks (`follow`: until the container ends or the signal
   * aborts). A refusal (no such pod or container, not started yet) rejects with ApiError before
   * any chunk.
   */
  async podLog(
    namespace: string,
    pod: string,
    o: { container?: string; follow?: boolean; limitBytes?: number; tailLines?: number },
    signal?: AbortSignal,
  ): Promise<AsyncIterable<Buffer>> {
    const path = resourcePath(PODS, namespace, pod, 'log');
    const request = `GET ${path}`;
    const started = Date.now();
    let res: Dispatcher.ResponseData;
    try {
      res = await this.watchPool.request({
        origin: this.baseUrl,
        path: withQuery(path, {
          container: o.container,
          follow: o.follow ? true : undefined,
          limitBytes: o.limitBytes,
          tailLines: o.tailLines,
        }),
        method: 'GET',
        headers: { ...(await this.authHeaders()), 'user-agent': this.userAgent() },
        signal,
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: o.follow ? 0 : (this.opts.timeoutMs ?? 30_000),
      });
    } catch (err) {
      this.record('get', PODS, 'log', 0, started);
      throw new ApiError(0, '', transportMessage(err), request);
    }
    this.record('get', PODS, 'log', res.statusCode, started);
    if (res.statusCode >= 300) throw toApiError(res.statusCode, await res.body.text().catch(() => ''), request);
    return res.body as AsyncIterable<Buffer>;
  }

  /** GET of a non-resource path as text (e.g. the API server's own /metrics). */
  async getText(path: string): Promise<string> {
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await this.pool.request({
        origin: this.baseUrl,
        path,
        method: 'GET',
        headers: { ...(await this.authHeaders()), 'user-agent': this.userAgent() },
        headersTimeout: this.opts.timeoutMs ?? 30_000,
        bodyTimeout: this.opts.timeoutMs ?? 30_000,
      });
      text = await res.body.text();
    } catch (err) {
      throw new ApiError(0, '', transportMessage(err), `GET ${path}`);
    }
    if (res.statusCode >= 300) throw toApiError(res.statusCode, text, `GET ${path}`);
    return text;
  }

  /** Closes every connection pool (the views made by `as()` share them); open watches end. */
  async close(): Promise<void> {
    if (this.shared.closed) return;
    this.shared.closed = true;
    const { own, callers } = this.shared;
    await Promise.all([own.pool.destroy(), own.watchPool.destroy(), callers.pool.destroy(), callers.watchPool.destroy()]).catch(() => {});
  }

  private async call<T>(c: Call): Promise<T> {
    const started = Date.now();
    const request = `${c.method} ${c.path}`;
    const timeout = this.opts.timeoutMs ?? 30_000;
    let res: Dispatcher.ResponseData;
    try {
      const headers: Record<string, string> = { ...(await this.authHeaders()), accept: 'application/json', 'user-agent': this.userAgent() };
      if (c.body !== undefined) headers['content-type'] = c.contentType ?? 'application/json';
      res = await this.pool.request({
        origin: this.baseUrl,
        path: withQuery(c.path, c.query),
        method: c.method,
        headers,
        body: c.body === undefined ? undefined : JSON.stringify(c.body),
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (err) {
      this.record(c.verb, c.type, c.subresource, 0, started);
      throw new ApiError(0, '', transportMessage(err), request);
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      this.record(c.verb, c.type, c.subresource, 0, started);
      throw new ApiError(0, '', transportMessage(err), request);
    }
    this.record(c.verb, c.type, c.subresource, res.statusCode, started);
    if (res.statusCode >= 300) throw this.explained(toApiError(res.statusCode, text, request));
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** A refused impersonation names the binding that is missing (the API server's text names only the verb). */
  private explained(err: ApiError): ApiError {
    return this.identity.kind === 'serviceAccount' ? explainImpersonationRefusal(err, this.identity) : err;
  }

  private record(verb: Verb, type: ResourceType, subresource: string | undefined, code: number, started: number): void {
    this.opts.onRequest?.({ verb, resource: resourceLabel(type, subresource), code, durationMs: Date.now() - started });
  }

  private userAgent(): string {
    return this.opts.userAgent ?? 'plugflow';
  }

  /**
   * The Authorization header of this view's identity: a caller's bearer token as given, or the
   * kubeconfig's header (bearer or Basic), re-read every minute (rotating tokens).
   */
  private async authHeaders(): Promise<Record<string, string>> {
    if (this.identity.kind === 'token') return { authorization: `Bearer ${this.identity.token}` };
    if (this.identity.kind === 'serviceAccount') {
      const { namespace, name } = this.identity;
      return { ...(await this.ownAuthHeaders()), 'impersonate-user': `system:serviceaccount:${namespace}:${name}` };
    }
    return this.ownAuthHeaders();
  }

  private async ownAuthHeaders(): Promise<Record<string, string>> {
    if (Date.now() - this.shared.ownAuth.at < AUTH_TTL_MS) return this.shared.ownAuth.headers;
    this.shared.ownAuth = { headers: await kubeconfigAuthorization(this.kc), at: Date.now() };
    return this.shared.ownAuth.headers;
  }

  /** POST to an object's subresource: pods/binding, serviceaccounts/token (TokenRequest), pods/eviction. */
  createSubresource<T>(type: ResourceType, namespace: string | undefined, name: string, subresource: string, body: unknown): Promise<T> {
    return this.call<T>({
      verb: 'create',
      method: 'POST',
      type,
      subresource,
      path: resourcePath(type, namespace, name, subresource),
      body,
    });
  }
}
