/**
 * The http driver: an input artifact fetched with GET from `url`, with the declared headers and
 * optional basic auth (from the Secret-backed environment variables the plan names). The body is
 * streamed to a file; a reply other than 2xx is an error naming the URL (never the credentials).
 *
 * Redirects are followed here, not by fetch: the declared headers (often tokens) and the
 * Authorization header belong to the artifact's origin, so they are sent only to URLs of that
 * origin (scheme, host and port) and dropped on a hop to any other. A redirect to a scheme other
 * than http(s), from https down to plain http, or past MAX_REDIRECTS hops is refused.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { HttpSource } from './plan.js';

export class HttpArtifactError extends Error {}

/** Hops followed before giving up: enough for a CDN or a release page, few enough to stop a loop. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TIMEOUT_MS = 30 * 60_000;

export async function downloadHttp(src: HttpSource, file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const where = redact(src.url);
  const start = parseUrl(src.url, where);
  const { reply, url } = await follow(start, originHeaders(src, env), where);
  const from = hopLabel(start, url);
  if (!reply.ok || !reply.body) {
    await reply.body?.cancel();
    throw new HttpArtifactError(`GET ${where}${from}: the server answered HTTP ${reply.status}`);
  }
  try {
    await pipeline(Readable.fromWeb(reply.body as WebReadableStream), createWriteStream(file, { mode: 0o600 }));
  } catch (err) {
    throw new HttpArtifactError(`GET ${where}${from}: reading the body: ${(err as Error).message}`);
  }
}

/** The declared headers and basic auth: what only the artifact's own origin may see. */
function originHeaders(src: HttpSource, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of src.headers ?? []) headers[h.name.toLowerCase()] = h.value;
  if (src.usernameEnv || src.passwordEnv) {
    const user = src.usernameEnv ? (env[src.usernameEnv] ?? '') : '';
    const pass = src.passwordEnv ? (env[src.passwordEnv] ?? '') : '';
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  return headers;
}

/**
 * GETs `start`, following up to MAX_REDIRECTS redirects; the answer that is not a redirect, and
 * the URL that gave it. `headers` go only to URLs of `start`'s origin.
 */
async function follow(start: URL, headers: Record<string, string>, where: string): Promise<{ reply: Response; url: URL }> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  let url = start;
  for (let hops = 0; ; hops++) {
    const reply = await get(url, url.origin === start.origin ? headers : {}, signal, `GET ${where}${hopLabel(start, url)}`);
    if (!REDIRECT_STATUSES.has(reply.status)) return { reply, url };
    await reply.body?.cancel();
    if (hops === MAX_REDIRECTS)
      throw new HttpArtifactError(
        `GET ${where}: more than ${MAX_REDIRECTS} redirects (still redirected at ${redact(url.href)}); point the artifact at the final URL`,
      );
    url = redirectTarget(url, reply.headers.get('location'), where);
  }
}

/** One request, redirects left to the caller; `label` (redacted) prefixes its errors. */
async function get(url: URL, headers: Record<string, string>, signal: AbortSignal, label: string): Promise<Response> {
  try {
    return await fetch(url, { method: 'GET', headers, redirect: 'manual', signal });
  } catch (err) {
    const cause = (err as { cause?: Error }).cause;
    throw new HttpArtifactError(`${label}: ${cause?.message ?? (err as Error).message}`);
  }
}

/** Names the hop an error happened on, when it is not the artifact's own URL. */
function hopLabel(start: URL, url: URL): string {
  return url.href === start.href ? '' : ` (redirected to ${redact(url.href)})`;
}

/**
 * Where a redirect from `current` leads (`location` resolved against it), refusing what must not
 * be followed: no Location, a scheme other than http(s), https down to plain http (the headers and
 * the body would travel in clear), and user information in the URL. Exported for tests.
 */
export function redirectTarget(current: URL, location: string | null, where: string): URL {
  const refuse = (why: string) => new HttpArtifactError(`GET ${where}: refusing the redirect from ${redact(current.href)}: ${why}`);
  if (!location) throw refuse('the answer has no Location header');
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw refuse('its Location is not a URL');
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    throw refuse(`it leads to a ${JSON.stringify(next.protocol.replace(/:$/, ''))} URL; only http and https are followed`);
  if (current.protocol === 'https:' && next.protocol === 'http:')
    throw refuse(`it downgrades https to plain http (${redact(next.href)}); point the artifact at an https URL that does not`);
  if (next.username || next.password) throw refuse(`its Location carries credentials (${redact(next.href)})`);
  return next;
}

/** `url` parsed, refusing one fetch cannot use or that would put credentials in the request line. */
function parseUrl(url: string, where: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new HttpArtifactError(`GET ${where}: not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new HttpArtifactError(`GET ${where}: only http and https URLs are fetched`);
  if (u.username || u.password)
    throw new HttpArtifactError(`GET ${where}: the URL carries credentials; give them with auth.basicAuth (Secrets) instead`);
  return u;
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
