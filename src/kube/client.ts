/**
 * The Kubernetes REST client of the controller (and anything else that wants it): JSON over one
 * keep-alive connection pool, merge patches, streaming watches, and one hook that sees every
 * request's verb, resource, status and duration — which is where the controller's API metrics
 * (errors by verb/resource, writes) come from.
 *
 * Why not client-node's generated APIs: in 1.x they build a new HTTP agent, hence a new TLS
 * connection, for every call, and their errors need per-call parsing. Credentials still come
 * from client-node's KubeConfig (files, tokens, exec plugins, in-cluster), refreshed every minute.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import { Agent, type Dispatcher } from 'undici';
import { ApiError } from './errors.js';
import { resourceLabel, resourcePath, type ResourceType } from './resource.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** Verbs that change something on the server. */
export const WRITE_VERBS: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

export interface RequestRecord {
  verb: Verb;
  /** `plural[.group][/subresource]`. */
  resource: string;
  /** HTTP status; 0 for a transport failure. */
  code: number;
  durationMs: number;
}

export interface KubeClientOptions {
  /** Called after every request (watches: when they start streaming or fail to). */
  onRequest?: (r: RequestRecord) => void;
  /** Maximum parallel connections for ordinary requests (watches use their own pool). */
  connections?: number;
  /** Timeout of an ordinary request, headers and body. */
  timeoutMs?: number;
  userAgent?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface ObjectList<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  /** Called once the server accepted the watch (status 200), before any event. */
  onOpen?: () => void;
}

/** One line of a watch stream. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

type Query = Record<string, string | number | boolean | undefined>;

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

export class KubeClient {
  private auth: { headers: Record<string, string>; at: number } = { headers: {}, at: -Infinity };
  private closed = false;

  private constructor(
    readonly baseUrl: string,
    private readonly kc: KubeConfig,
    private readonly pool: Dispatcher,
    private readonly watchPool: Dispatcher,
    private readonly opts: KubeClientOptions,
  ) {}

  /** A client for the kubeconfig's current cluster and user. */
  static async fromKubeConfig(kc: KubeConfig, opts: KubeClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const tls: RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const connect = {
      ca: tls.ca as string | Buffer | undefined,
      cert: tls.cert as string | Buffer | undefined,
      key: tls.key as string | Buffer | undefined,
      rejectUnauthorized: tls.rejectUnauthorized ?? true,
      servername: tls.servername,
    };
    const pool = new Agent({ connect, connections: opts.connections ?? 32, keepAliveTimeout: 30_000 });
    const watchPool = new Agent({ connect, keepAliveTimeout: 1_000 });
    return new KubeClient(cluster.server.replace(/\/+$/, ''), kc, pool, watchPool, opts);
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
      query: { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, limit: o.limit, continue: o.continue, resourceVersion: o.resourceVersion },
    });
  }

  create<T>(type: ResourceType, namespace: string | undefined, body: unknown): Promise<T> {
    return this.call<T>({ verb: 'create', method: 'POST', type, path: resourcePath(type, namespace), body });
  }

  /** JSON merge patch (RFC 7386). A `metadata.resourceVersion` in the patch makes it conditional. */
  mergePatch<T>(type: ResourceType, namespace: string | undefined, name: string, patch: unknown, subresource?: string): Promise<T> {
    return this.call<T>({
      verb: 'patch',
      method: 'PATCH',
      type,
      subresource,
      path: resourcePath(type, namespace, name, subresource),
      body: patch,
      contentType: MERGE_PATCH,
    });
  }

  /** PUT: replaces the object; its `metadata.resourceVersion` must be current (409 otherwise). */
  replace<T>(type: ResourceType, namespace: string | undefined, name: string, body: unknown, subresource?: string): Promise<T> {
    return this.call<T>({ verb: 'update', method: 'PUT', type, subresource, path: resourcePath(type, namespace, name, subresource), body });
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options?: { uid?: string; gracePeriodSeconds?: number }): Promise<unknown> {
    const body: Record<string, unknown> = {};
    if (options?.uid) body.preconditions = { uid: options.uid };
    if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
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
    let buffered = '';
    try {
      for await (const chunk of res.body) {
        buffered += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!line) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch {
            throw new ApiError(0, '', `malformed watch line: ${line.slice(0, 200)}`, `WATCH ${path}`);
          }
          onEvent(event);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError) throw err;
      throw new ApiError(0, '', transportMessage(err), `WATCH ${path}`);
    }
  }

  /** GET of a non-resource path as text (e.g. the API server's own /metrics). */
  async getText(path: string): Promise<string> {
    const res = await this.pool.request({
      origin: this.baseUrl,
      path,
      method: 'GET',
      headers: { ...(await this.authHeaders()), 'user-agent': this.userAgent() },
      headersTimeout: this.opts.timeoutMs ?? 30_000,
      bodyTimeout: this.opts.timeoutMs ?? 30_000,
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw toApiError(res.statusCode, text, `GET ${path}`);
    return text;
  }

  /** Closes both connection pools; open watches end. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.pool.destroy(), this.watchPool.destroy()]).catch(() => {});
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
    if (res.statusCode >= 300) throw toApiError(res.statusCode, text, request);
    return (text ? JSON.parse(text) : {}) as T;
  }

  private record(verb: Verb, type: ResourceType, subresource: string | undefined, code: number, started: number): void {
    this.opts.onRequest?.({ verb, resource: resourceLabel(type, subresource), code, durationMs: Date.now() - started });
  }

  private userAgent(): string {
    return this.opts.userAgent ?? 'plugflow';
  }

  /** The Authorization header from the kubeconfig, re-read every minute (rotating tokens). */
  private async authHeaders(): Promise<Record<string, string>> {
    if (Date.now() - this.auth.at < AUTH_TTL_MS) return this.auth.headers;
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    const given = (opts.headers ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(given)) if (k.toLowerCase() === 'authorization' && typeof v === 'string') headers.authorization = v;
    if (!headers.authorization && typeof opts.auth === 'string' && opts.auth !== 'undefined:undefined') {
      headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    }
    this.auth = { headers, at: Date.now() };
    return headers;
  }

  /** POST to an object's subresource: pods/binding, serviceaccounts/token (TokenRequest), pods/eviction. */
  createSubresource<T>(type: ResourceType, namespace: string | undefined, name: string, subresource: string, body: unknown): Promise<T> {
    return this.call<T>({ verb: 'create', method: 'POST', type, subresource, path: resourcePath(type, namespace, name, subresource), body });
  }
}

function withQuery(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

function transportMessage(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.cause?.code ?? e?.code;
  const msg = e?.cause?.message ?? e?.message ?? String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

/** Builds an ApiError from a Status body (or whatever text came back). */
export function toApiError(code: number, text: string, request: string): ApiError {
  let reason = '';
  let message = text.slice(0, 500) || `HTTP ${code}`;
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string; code?: number };
    reason = status.reason ?? '';
    if (status.message) message = status.message;
  } catch {
    /* not a Status object */
  }
  return new ApiError(code, reason, message, request);
}
