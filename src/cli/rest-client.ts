/**
 * Client of the plugflow server's REST API (the workflow endpoints and the event endpoint), for
 * the CLI. A server with a generated certificate needs `insecureSkipTlsVerify` (`-k`).
 */
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import type { Workflow } from '../api/index.js';
import type { WorkflowOperation } from './workflow-backend.js';

export interface RestClientOptions {
  /** Base address, e.g. `https://localhost:2746`. */
  server: string;
  /** Bearer token (client auth mode). */
  token?: string;
  insecureSkipTlsVerify?: boolean;
  timeoutMs?: number;
}

/** An error reply of the server: HTTP status, gRPC-style code and message. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RestError';
  }
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface WorkflowList {
  items: Workflow[];
  metadata?: { continue?: string; resourceVersion?: string };
}

export interface EventReply {
  status: number;
  body: unknown;
}

export class RestClient {
  private readonly base: string;
  private readonly dispatcher?: Dispatcher;

  constructor(private readonly opts: RestClientOptions) {
    if (!/^https?:\/\//.test(opts.server)) throw new Error(`--server must be an http:// or https:// address, got "${opts.server}"`);
    this.base = opts.server.replace(/\/+$/, '');
    if (opts.insecureSkipTlsVerify) this.dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
  }

  createWorkflow(namespace: string, workflow: Workflow, serverDryRun = false): Promise<Workflow> {
    return this.json('POST', `/api/v1/workflows/${enc(namespace)}`, { namespace, serverDryRun, workflow });
  }

  listWorkflows(namespace: string, o: ListOptions = {}): Promise<WorkflowList> {
    const q = new URLSearchParams();
    if (o.labelSelector) q.set('listOptions.labelSelector', o.labelSelector);
    if (o.fieldSelector) q.set('listOptions.fieldSelector', o.fieldSelector);
    if (o.limit !== undefined) q.set('listOptions.limit', String(o.limit));
    if (o.continue) q.set('listOptions.continue', o.continue);
    const qs = q.toString();
    return this.json('GET', `/api/v1/workflows/${enc(namespace)}${qs ? `?${qs}` : ''}`);
  }

  getWorkflow(namespace: string, name: string): Promise<Workflow> {
    return this.json('GET', `/api/v1/workflows/${enc(namespace)}/${enc(name)}`);
  }

  async deleteWorkflow(namespace: string, name: string): Promise<void> {
    await this.json('DELETE', `/api/v1/workflows/${enc(namespace)}/${enc(name)}`);
  }

  /** Any JSON call of the REST API (the typed methods above are the common ones). */
  call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.json<T>(method, path, body);
  }

  /** PUT /api/v1/workflows/{ns}/{name}/{operation} with the peer's body form. */
  operate(namespace: string, name: string, op: WorkflowOperation): Promise<Workflow> {
    const list = (p?: Record<string, string>) => (p ? Object.entries(p).map(([k, v]) => `${k}=${v}`) : undefined);
    const body =
      op.kind === 'resume'
        ? { nodeFieldSelector: op.node ? `displayName=${op.node}` : undefined, parameters: list(op.parameters) }
        : op.kind === 'resubmit'
          ? { memoized: op.memoized ?? false, parameters: list(op.parameters) }
          : op.kind === 'retry'
            ? { restartSuccessful: op.restartSuccessful ?? false, nodeFieldSelector: op.selector }
            : {};
    return this.json('PUT', `/api/v1/workflows/${enc(namespace)}/${enc(name)}/${op.kind}`, body);
  }

  /** Posts an event; returns status and body (a 503 is returned, not thrown, so callers can retry). */
  async sendEvent(
    namespace: string,
    discriminator: string,
    body: string,
    headers: Record<string, string | string[]> = {},
  ): Promise<EventReply> {
    const res = await this.raw('POST', `/api/v1/events/${enc(namespace)}/${discriminator ? enc(discriminator) : ''}`, body, headers);
    return { status: res.status, body: res.body };
  }

  /** Streams one node's output artifact as stored (a non-2xx reply is a RestError with its message). */
  async openArtifact(namespace: string, name: string, nodeId: string, artifact: string): Promise<{ body: Readable; close(): void }> {
    const path = `/artifact-files/${enc(namespace)}/workflows/${enc(name)}/${enc(nodeId)}/outputs/${enc(artifact)}`;
    const headers: Record<string, string> = {};
    if (this.opts.token) headers.authorization = this.opts.token.startsWith('Bearer ') ? this.opts.token : `Bearer ${this.opts.token}`;
    const res = await request(this.base + path, { method: 'GET', headers, dispatcher: this.dispatcher }).catch((err: Error) => {
      throw new Error(`cannot reach ${this.base}: ${err.message}`);
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text();
      let err: { code?: number; message?: string } = {};
      try {
        err = JSON.parse(text) as typeof err;
      } catch {
        /* not JSON */
      }
      throw new RestError(res.statusCode, err.code, `GET ${path}: ${res.statusCode} ${err.message ?? text.slice(0, 200)}`);
    }
    return { body: res.body as unknown as Readable, close: () => res.body.destroy() };
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(method, path, body === undefined ? undefined : JSON.stringify(body), {});
    if (res.status >= 200 && res.status < 300) return res.body as T;
    const err = res.body as { code?: number; message?: string } | undefined;
    throw new RestError(res.status, err?.code, `${method} ${path}: ${res.status} ${err?.message ?? JSON.stringify(res.body)}`);
  }

  private async raw(
    method: string,
    path: string,
    body: string | undefined,
    extra: Record<string, string | string[]>,
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string | string[]> = { accept: 'application/json', ...extra };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.opts.token) headers.authorization = this.opts.token.startsWith('Bearer ') ? this.opts.token : `Bearer ${this.opts.token}`;
    const timeout = this.opts.timeoutMs ?? 30_000;
    const res = await request(this.base + path, {
      method: method as 'GET',
      headers,
      body,
      dispatcher: this.dispatcher,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    }).catch((err: Error & { code?: string; cause?: { code?: string } }) => {
      const code = err.code ?? err.cause?.code;
      const hint = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(String(code))
        ? ' (a generated certificate? pass --insecure-skip-tls-verify)'
        : '';
      throw new Error(`cannot reach ${this.base}: ${err.message}${code ? ` [${code}]` : ''}${hint}`);
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the text */
    }
    return { status: res.statusCode, body: parsed };
  }
}

const enc = encodeURIComponent;
