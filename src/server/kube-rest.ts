/**
 * A small Kubernetes REST client for the server's hot paths, on one undici connection pool per
 * identity kind. @kubernetes/client-node 2.x builds a new HTTP agent (so a new TLS connection)
 * for every call; at event rates that costs more than the call itself. Here every caller's
 * request shares one pool and carries its own bearer token, and the server's own identity
 * (token, token file, exec plugin or client certificate from its kubeconfig) uses a second pool —
 * never the same one, so a client certificate of the server is never presented with a caller's
 * token.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import { Agent, request, type Dispatcher } from 'undici';

/** Who a call is made as: the server's own account, or a caller's bearer token used as-is. */
export type Identity = { kind: 'server' } | { kind: 'token'; token: string };

export const SERVER_IDENTITY: Identity = { kind: 'server' };

/** A non-2xx reply of the API server, with its Status reason and message. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

type Query = Record<string, string | number | boolean | undefined>;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
  identity: Identity;
  /** Per-request timeout (headers and body), default 30 s. */
  timeoutMs?: number;
}

/** How long the server's own auth header is reused before asking the kubeconfig again. */
const SERVER_AUTH_TTL_MS = 60_000;

export class KubeRest {
  private serverAuth: { header?: string; at: number } = { at: -Infinity };

  private constructor(
    readonly baseUrl: string,
    private readonly kc: KubeConfig,
    private readonly serverPool: Dispatcher,
    private readonly callerPool: Dispatcher,
  ) {}

  /** Builds pools from the kubeconfig's current cluster and user (the server's identity). */
  static async fromKubeConfig(kc: KubeConfig, connections = 32): Promise<KubeRest> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const verify = cluster.skipTLSVerify ? false : undefined;
    const base = { ca: opts.ca, servername: cluster.tlsServerName, rejectUnauthorized: verify };
    const serverPool = new Agent({ connections, connect: { ...base, cert: opts.cert, key: opts.key } });
    const callerPool = new Agent({ connections, connect: base });
    return new KubeRest(cluster.server.replace(/\/+$/, ''), kc, serverPool, callerPool);
  }

  async close(): Promise<void> {
    await Promise.all([this.serverPool.close(), this.callerPool.close()]);
  }

  /** Sends a request and returns the parsed JSON reply; a non-2xx reply throws KubeApiError. */
  async call<T = unknown>(req: KubeRequest): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.identity.kind === 'token') {
      headers.authorization = `Bearer ${req.identity.token}`;
    } else {
      const auth = await this.serverAuthHeader();
      if (auth) headers.authorization = auth;
    }
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = req.contentType ?? 'application/json';
    }
    const timeout = req.timeoutMs ?? 30_000;
    const res = await request(this.baseUrl + req.path + queryString(req.query), {
      method: req.method,
      headers,
      body,
      dispatcher: req.identity.kind === 'token' ? this.callerPool : this.serverPool,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) return (text ? JSON.parse(text) : {}) as T;
    throw toKubeError(res.statusCode, text);
  }

  private async serverAuthHeader(): Promise<string | undefined> {
    if (Date.now() - this.serverAuth.at < SERVER_AUTH_TTL_MS) return this.serverAuth.header;
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const h = opts.headers as Record<string, string> | undefined;
    this.serverAuth = { header: h?.Authorization ?? h?.authorization, at: Date.now() };
    return this.serverAuth.header;
  }
}

function queryString(q?: Query): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

function toKubeError(status: number, text: string): KubeApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string };
    return new KubeApiError(status, s.reason ?? '', s.message ?? text);
  } catch {
    return new KubeApiError(status, '', text.trim() || `HTTP ${status}`);
  }
}

/** Paths of plugflow resources (group and version from src/api). */
export function resourcePath(group: string, version: string, plural: string, namespace?: string, name?: string): string {
  let p = `/apis/${group}/${version}`;
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${plural}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  return p;
}
