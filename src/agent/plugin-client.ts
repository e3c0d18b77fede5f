/**
 * The plugin RPC client: `POST {plugin}/api/v1/template.execute` with the plugin's bearer token,
 * and the classification of what came back into a CallOutcome (COMPAT.md "Plugin call state
 * machine"). One keep-alive connection pool per plugin: the agent calls the same few localhost
 * servers over and over, so connection setup must not be paid per call.
 *
 * Tokens live only in the Authorization header built here; no error or outcome carries one.
 */
import { STATUS_CODES } from 'node:http';
import { Pool } from 'undici';
import { parseUserJson, PLUGIN_EXECUTE_PATH, UnsafeJsonError, type ExecuteTemplateReply } from '../api/index.js';
import type { CallOutcome } from './call-machine.js';
import { formatBytes, MAX_REPLY_BYTES } from './reply-validation.js';

export interface PluginTarget {
  name: string;
  /** Base address, e.g. `http://localhost:4355`. */
  address: string;
  token: string;
}

export interface PluginClientOptions {
  /** Whole-call timeout (connect, headers and body); default 30 s. */
  timeoutMs?: number;
  /** Largest reply body read; a bigger one is fatal. Default MAX_REPLY_BYTES (1 MiB). */
  maxBodyBytes?: number;
  /** Connections per plugin. */
  connections?: number;
}

/** Error codes of network trouble that may pass: the call is retried. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_ABORTED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

const MAX_MESSAGE_BODY = 1000;

interface Conn {
  pool: Pool;
  path: string;
  authorization: string;
}

export class PluginClient {
  private readonly conns = new Map<string, Conn>();
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(targets: readonly PluginTarget[], opts: PluginClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxBodyBytes = opts.maxBodyBytes ?? MAX_REPLY_BYTES;
    for (const t of targets) {
      const url = new URL(t.address);
      this.conns.set(t.name, {
        pool: new Pool(url.origin, {
          connections: opts.connections ?? 16,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
          connectTimeout: this.timeoutMs,
          // `localhost` may resolve to ::1 first while a plugin listens on 127.0.0.1 only.
          autoSelectFamily: true,
        }),
        path: url.pathname.replace(/\/+$/, '') + PLUGIN_EXECUTE_PATH,
        authorization: `Bearer ${t.token}`,
      });
    }
  }

  /** Names of the plugins this client can call, in the order given. */
  get plugins(): string[] {
    return [...this.conns.keys()];
  }

  /** Calls `template.execute` of one plugin with an already serialised ExecuteTemplateArgs. */
  async execute(plugin: string, body: string): Promise<CallOutcome> {
    const conn = this.conns.get(plugin);
    if (!conn) return { kind: 'fatal', message: `plugin ${plugin} is not known to this agent` };
    const signal = AbortSignal.timeout(this.timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await conn.pool.request({
        path: conn.path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: conn.authorization,
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
        signal,
      });
      status = res.statusCode;
      const tooBig = {
        kind: 'fatal',
        message: `plugin ${plugin} replied with a body over the ${formatBytes(this.maxBodyBytes)} limit of a plugin reply`,
      } as const;
      // A declared length over the limit is refused before reading a byte of it.
      if (Number(res.headers['content-length']) > this.maxBodyBytes) {
        res.body.destroy();
        return tooBig;
      }
      const read = await readCapped(res.body, this.maxBodyBytes);
      if (read === undefined) return tooBig;
      text = read;
    } catch (err) {
      return classifyError(plugin, err, signal.aborted, this.timeoutMs);
    }
    return classifyReply(plugin, status, text);
  }

  async close(): Promise<void> {
    await Promise.all([...this.conns.values()].map((c) => c.pool.close().catch(() => {})));
  }
}

/** Reads a body up to `max` bytes; undefined when it is bigger (the rest is discarded). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** HTTP status and body → outcome. Exported for the unit tests of each row. */
export function classifyReply(plugin: string, status: number, text: string): CallOutcome {
  if (status === 404) return { kind: 'notImplemented' };
  if (status === 503) return { kind: 'transient', reason: `503: ${clip(text)}`.trimEnd() };
  if (status !== 200) {
    // `<status>: <body>` (COMPAT.md); with no body, say so rather than leave a bare `403: `.
    const body =
      text.trim() === '' ? `${STATUS_CODES[status] ? `${STATUS_CODES[status]} ` : ''}(plugin ${plugin} sent no body)` : clip(text);
    return { kind: 'fatal', message: `${status}: ${body}` };
  }
  if (text.trim() === '')
    return {
      kind: 'fatal',
      message: `plugin ${plugin} replied 200 with an empty body; expected JSON ({} when the template is not its own)`,
    };
  let value: unknown;
  try {
    value = parseUserJson(text, `plugin ${plugin} replied 200 with a body that`);
  } catch (err) {
    if (err instanceof UnsafeJsonError)
      return {
        kind: 'fatal',
        message: `plugin ${plugin} replied with a key named "__proto__" at ${err.path}, which plugflow refuses (it could rewrite object prototypes)`,
      };
    return { kind: 'fatal', message: `plugin ${plugin} replied 200 with a body that is not JSON: ${clip(text, 200)}` };
  }
  if (value === null) return { kind: 'skip' };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { kind: 'fatal', message: `plugin ${plugin} replied 200 with JSON that is not an object: ${clip(text, 200)}` };
  }
  const node = Object.hasOwn(value, 'node') ? (value as { node?: unknown }).node : undefined;
  if (node === undefined || node === null) return { kind: 'skip' };
  // The call machine checks the rest against the contract (reply-validation.ts).
  return { kind: 'reply', reply: value as ExecuteTemplateReply };
}

/** A thrown error → transient (network, timeout, EOF) or fatal (anything we cannot retry). */
export function classifyError(plugin: string, err: unknown, timedOut: boolean, timeoutMs: number): CallOutcome {
  if (timedOut) return { kind: 'transient', reason: `no reply within ${timeoutMs / 1000}s` };
  const e = err as { code?: string; message?: string; name?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  if ((code && TRANSIENT_CODES.has(code)) || e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    const msg = e?.cause?.message ?? e?.message ?? String(err);
    return { kind: 'transient', reason: code && !msg.includes(code) ? `${code}: ${msg}` : msg };
  }
  return { kind: 'fatal', message: `calling plugin ${plugin} failed: ${e?.message ?? String(err)}` };
}

function clip(text: string, max = MAX_MESSAGE_BODY): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
