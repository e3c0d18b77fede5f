/**
 * The http driver: an input artifact fetched with GET from `url`, with the declared headers and
 * optional basic auth (from the Secret-backed environment variables the plan names). The body is
 * streamed to a file; a reply other than 2xx is an error naming the URL (never the credentials).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { HttpSource } from './plan.js';

export class HttpArtifactError extends Error {}

export async function downloadHttp(src: HttpSource, file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const headers: Record<string, string> = {};
  for (const h of src.headers ?? []) headers[h.name.toLowerCase()] = h.value;
  if (src.usernameEnv || src.passwordEnv) {
    const user = src.usernameEnv ? (env[src.usernameEnv] ?? '') : '';
    const pass = src.passwordEnv ? (env[src.passwordEnv] ?? '') : '';
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  const where = redact(src.url);
  let reply: Response;
  try {
    // Node's fetch (undici) follows redirects and streams the body.
    reply = await fetch(src.url, { method: 'GET', headers, redirect: 'follow', signal: AbortSignal.timeout(30 * 60_000) });
  } catch (err) {
    const cause = (err as { cause?: Error }).cause;
    throw new HttpArtifactError(`GET ${where}: ${cause?.message ?? (err as Error).message}`);
  }
  if (!reply.ok || !reply.body) {
    await reply.body?.cancel();
    throw new HttpArtifactError(`GET ${where}: the server answered HTTP ${reply.status}`);
  }
  try {
    await pipeline(Readable.fromWeb(reply.body as WebReadableStream), createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    throw new HttpArtifactError(`GET ${where}: reading the body: ${(err as Error).message}`);
  }
}

/** The URL without user information or query string (which may hold tokens). */
function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return JSON.stringify(url.slice(0, 100));
  }
}
