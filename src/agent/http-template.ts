/**
 * The http template, run by the agent (COMPAT.md "HTTP template"; spec document 001 "HTTP").
 *
 * - method defaults to GET; the body comes from `body` or `bodyFrom.bytes` (base64 in JSON, as
 *   Kubernetes encodes bytes, or a list of numbers); header values from `value` or a Secret key;
 * - `insecureSkipVerify` turns off TLS verification for this request only;
 * - `timeoutSeconds` (default 30) bounds the whole exchange;
 * - `outputs.result` is the response body; without `successCondition` a 2xx succeeds and anything
 *   else fails `received non-2xx response code: N`; with it, the expression decides, evaluated over
 *   `request.{method,url,body,headers}` and `response.{statusCode,body,headers}` (header names in
 *   canonical form, `Content-Type`, each value a list of strings, as the peer presents them).
 */
import { Agent } from 'undici';
import type { HTTP, NodeResult, Template } from '../api/index.js';
import { errorMessage } from '../log/error-message.js';

export type ReadSecret = (namespace: string, name: string, key: string) => Promise<string>;
/** Evaluates a boolean expression over an environment; throws with a message when it cannot. */
export type EvaluateCondition = (expression: string, env: Record<string, unknown>) => boolean;

export interface HttpExecutorOptions {
  /** Namespace of the workflow: where header secrets are read. */
  namespace: string;
  readSecret: ReadSecret;
  evaluate: EvaluateCondition;
  /** Largest response body kept; default 1 MiB (it becomes a status field). */
  maxBodyBytes?: number;
}

export class HttpExecutor {
  private readonly verifying = new Agent({ keepAliveTimeout: 10_000 });
  private readonly insecure = new Agent({ keepAliveTimeout: 10_000, connect: { rejectUnauthorized: false } });
  private readonly maxBodyBytes: number;

  constructor(private readonly opts: HttpExecutorOptions) {
    this.maxBodyBytes = opts.maxBodyBytes ?? 1024 * 1024;
  }

  async execute(template: Template, signal?: AbortSignal): Promise<NodeResult> {
    const http = template.http;
    if (!http) return failed(`template ${template.name} has no http section`);
    const prepared = await this.prepare(http);
    if ('error' in prepared) return failed(prepared.error);
    const { method, url, body, headers } = prepared;
    const timeoutSeconds = http.timeoutSeconds && http.timeoutSeconds > 0 ? http.timeoutSeconds : 30;
    const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
    const both = signal ? AbortSignal.any([timeout, signal]) : timeout;
    let statusCode: number;
    let responseHeaders: Record<string, string[]>;
    let responseBody: string;
    try {
      const res = await (http.insecureSkipVerify ? this.insecure : this.verifying).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method,
        headers: flatHeaders(headers),
        body: body.length > 0 || !['GET', 'HEAD'].includes(method) ? body : undefined,
        signal: both,
      });
      statusCode = res.statusCode;
      responseHeaders = canonicalHeaders(res.headers);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBodyBytes) {
          res.body.destroy();
          return failed(`http response of ${url.href} is larger than ${this.maxBodyBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      responseBody = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (timeout.aborted) return failed(`http request to ${url.href} timed out after ${timeoutSeconds}s`);
      const e = err as { message?: string; cause?: { message?: string; code?: string }; code?: string };
      const code = e.cause?.code ?? e.code;
      const msg = e.cause?.message ?? e.message ?? String(err);
      return failed(`http request to ${url.href} failed: ${code && !msg.includes(code) ? `${code}: ` : ''}${msg}`);
    }
    const outputs = { result: responseBody };
    if (!http.successCondition) {
      if (statusCode >= 200 && statusCode < 300) return { phase: 'Succeeded', outputs };
      return { phase: 'Failed', message: `received non-2xx response code: ${statusCode}`, outputs };
    }
    const env = {
      request: { method, url: url.href, body: body.toString('utf8'), headers },
      response: { statusCode, body: responseBody, headers: responseHeaders },
    };
    let ok: boolean;
    try {
      ok = this.opts.evaluate(http.successCondition, env);
    } catch (err) {
      return {
        phase: 'Failed',
        message: `http.successCondition ${JSON.stringify(http.successCondition)} failed: ${errorMessage(err)}`,
        outputs,
      };
    }
    if (ok) return { phase: 'Succeeded', outputs };
    return {
      phase: 'Failed',
      message: `http.successCondition ${JSON.stringify(http.successCondition)} is false (response code ${statusCode})`,
      outputs,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.verifying.close(), this.insecure.close()]).catch(() => {});
  }

  /** Method, URL, body and header values, or the first problem found. */
  private async prepare(
    http: HTTP,
  ): Promise<{ method: string; url: URL; body: Buffer; headers: Record<string, string[]> } | { error: string }> {
    let url: URL;
    try {
      url = new URL(http.url);
    } catch {
      return { error: `http.url ${JSON.stringify(http.url ?? '')} is not a valid URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { error: `http.url ${JSON.stringify(http.url)} must use http or https` };
    const method = (http.method || 'GET').toUpperCase();
    if (!/^[A-Z]+$/.test(method)) return { error: `http.method ${JSON.stringify(http.method)} is not an HTTP method` };
    if (http.body !== undefined && http.body !== '' && http.bodyFrom?.bytes !== undefined) {
      return { error: 'http.body and http.bodyFrom are both set; use one' };
    }
    let body: Buffer = Buffer.from(http.body ?? '', 'utf8');
    // Typed as base64 text (how Kubernetes encodes bytes in JSON); a YAML list of numbers is
    // accepted too, since the spec calls the field a list of bytes.
    const bytes: unknown = http.bodyFrom?.bytes;
    if (typeof bytes === 'string') body = Buffer.from(bytes, 'base64');
    else if (Array.isArray(bytes)) {
      if (!bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
        return { error: 'http.bodyFrom.bytes must be a list of numbers 0..255' };
      body = Buffer.from(bytes as number[]);
    }
    const headers: Record<string, string[]> = {};
    for (const [i, h] of (http.headers ?? []).entries()) {
      if (!h.name) return { error: `http.headers[${i}].name is required` };
      let value = h.value;
      const ref = h.valueFrom?.secretKeyRef;
      if (value === undefined && ref) {
        if (!ref.name || !ref.key) return { error: `http.headers[${i}].valueFrom.secretKeyRef needs name and key` };
        try {
          value = await this.opts.readSecret(this.opts.namespace, ref.name, ref.key);
        } catch (err) {
          return {
            error: `http.headers[${i}] (${h.name}): cannot read key ${ref.key} of secret ${this.opts.namespace}/${ref.name}: ${errorMessage(err)}`,
          };
        }
      }
      (headers[canonicalHeaderName(h.name)] ??= []).push(value ?? '');
    }
    return { method, url, body, headers };
  }
}

function failed(message: string): NodeResult {
  return { phase: 'Failed', message };
}

/** `content-type` → `Content-Type`, as Go's net/http presents header names. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('-');
}

function canonicalHeaders(h: Record<string, string | string[] | undefined>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    (out[canonicalHeaderName(k)] ??= []).push(...(Array.isArray(v) ? v : [v]));
  }
  return out;
}

function flatHeaders(h: Record<string, string[]>): string[] {
  return Object.entries(h).flatMap(([k, vs]) => vs.flatMap((v) => [k, v]));
}
