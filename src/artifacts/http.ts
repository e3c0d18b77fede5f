/**
 * The http driver: an input artifact fetched with GET from `url`, an output artifact uploaded
 * with PUT to it (the peer's way: webHDFS `?op=CREATE&overwrite=true`, Artifactory, any server
 * that takes a PUT), with the declared headers and optional basic auth or an OAuth2 bearer token
 * (oauth2.ts), and a TLS client certificate (credentials from the Secret-backed environment
 * variables the plan names). Bodies
 * are streamed to or from the file; a reply other than 2xx is an error naming the URL (never the
 * credentials, never the query string).
 *
 * Redirects are followed here, not by fetch: the declared headers (often tokens), the
 * Authorization header and the client certificate belong to the artifact's origin, so they are
 * sent only to URLs of that origin (scheme, host and port) and dropped on a hop to any other. A redirect to a scheme other
 * than http(s), from https down to plain http, or past MAX_REDIRECTS hops is refused. An upload
 * follows only 307 and 308 (the webHDFS name node's answer, leading to a data node), sending the
 * file again; a 301, 302 or 303 would turn the PUT into a GET without body, so it is refused.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createSecureContext } from 'node:tls';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { HttpSource } from './plan-http.js';
import { fetchToken } from './oauth2.js';

export class HttpArtifactError extends Error {}

/** Hops followed before giving up: enough for a CDN or a release page, few enough to stop a loop. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TIMEOUT_MS = 30 * 60_000;

export async function downloadHttp(src: HttpSource, file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const where = redact(src.url);
  const start = parseUrl(src.url, where);
  const own = await originCredentials(src, env, `GET ${where}`);
  const { reply, url } = await follow(start, own, where);
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

/**
 * Uploads `file` with PUT to the artifact's URL, following 307 and 308 (the file is sent again);
 * its size and sha256. The declared headers and credentials go only to the URL's own origin.
 */
export async function uploadHttp(
  src: HttpSource,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ size: number; sha256?: string }> {
  const where = redact(src.url);
  const start = parseUrl(src.url, where, 'PUT');
  const st = statSync(file);
  if (!st.isFile())
    throw new HttpArtifactError(`PUT ${where}: an http output is uploaded as one file; archive a directory (tar, the default)`);
  const own = await originCredentials(src, env, `PUT ${where}`);
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  let url = start;
  for (let hops = 0; ; hops++) {
    const label = `PUT ${where}${hopLabel(start, url)}`;
    const hash = createHash('sha256');
    let seen = 0;
    const body = createReadStream(file).pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          seen += chunk.length;
          done(null, chunk);
        },
      }),
    );
    const creds = url.origin === start.origin ? own : NONE;
    const sent = { ...creds, headers: { ...creds.headers, 'content-length': String(st.size) } };
    const reply = await request(url, 'PUT', sent, signal, label, Readable.toWeb(body) as ReadableStream);
    await reply.body?.cancel();
    // The checksum of what was sent, when the server read all of it before answering.
    if (reply.ok) return { size: st.size, ...(seen === st.size ? { sha256: hash.digest('hex') } : {}) };
    if (reply.status !== 307 && reply.status !== 308) {
      const why = REDIRECT_STATUSES.has(reply.status)
        ? `the server redirected the upload with HTTP ${reply.status}, which turns a PUT into a GET without body; only 307 and 308 are followed`
        : `the server answered HTTP ${reply.status}`;
      throw new HttpArtifactError(`${label}: ${why}`);
    }
    if (hops === MAX_REDIRECTS)
      throw new HttpArtifactError(
        `PUT ${where}: more than ${MAX_REDIRECTS} redirects (still redirected at ${redact(url.href)}); point the artifact at the final URL`,
      );
    url = redirectTarget(url, reply.headers.get('location'), where, 'PUT');
  }
}

/** What only the artifact's own origin is sent: headers, and a client certificate (a dispatcher presenting it). */
interface OriginCredentials {
  headers: Record<string, string>;
  dispatcher?: unknown;
}
const NONE: OriginCredentials = { headers: {} };

/**
 * The declared headers and basic auth, or the OAuth2 bearer token (which wins, as in the peer),
 * and the client certificate: what only the artifact's own origin may see.
 */
async function originCredentials(src: HttpSource, env: NodeJS.ProcessEnv, label: string): Promise<OriginCredentials> {
  const headers: Record<string, string> = {};
  for (const h of src.headers ?? []) headers[h.name.toLowerCase()] = h.value;
  if (src.usernameEnv || src.passwordEnv) {
    const user = src.usernameEnv ? (env[src.usernameEnv] ?? '') : '';
    const pass = src.passwordEnv ? (env[src.passwordEnv] ?? '') : '';
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  if (src.oauth2) {
    try {
      headers.authorization = `Bearer ${await fetchToken(src.oauth2, env)}`;
    } catch (err) {
      throw new HttpArtifactError(`${label}: ${(err as Error).message}`);
    }
  }
  if (!src.clientCertEnv || !src.clientKeyEnv) return { headers };
  const cert = env[src.clientCertEnv];
  const key = env[src.clientKeyEnv];
  if (!cert || !key)
    throw new HttpArtifactError(
      `${label}: http.auth.clientCert.${cert ? 'clientKeySecret' : 'clientCertSecret'} is not available (its Secret key is missing or empty)`,
    );
  const { Agent } = await import('undici');
  try {
    // Checked here, so a malformed PEM fails naming the field, not as a connection error.
    createSecureContext({ cert, key });
  } catch {
    throw new HttpArtifactError(`${label}: http.auth.clientCert does not hold a PEM certificate and its private key`);
  }
  return { headers, dispatcher: new Agent({ connect: { cert, key } }) };
}

/**
 * GETs `start`, following up to MAX_REDIRECTS redirects; the answer that is not a redirect, and
 * the URL that gave it. `headers` go only to URLs of `start`'s origin.
 */
async function follow(start: URL, own: OriginCredentials, where: string): Promise<{ reply: Response; url: URL }> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  let url = start;
  for (let hops = 0; ; hops++) {
    const reply = await request(url, 'GET', url.origin === start.origin ? own : NONE, signal, `GET ${where}${hopLabel(start, url)}`);
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
async function request(
  url: URL,
  method: 'GET' | 'PUT',
  creds: OriginCredentials,
  signal: AbortSignal,
  label: string,
  body?: ReadableStream,
): Promise<Response> {
  const init = { method, headers: creds.headers, redirect: 'manual' as const, signal, ...(body ? { body, duplex: 'half' as const } : {}) };
  try {
    if (creds.dispatcher) {
      // A client certificate needs undici's own fetch (the global one takes no TLS options).
      const { fetch: withDispatcher } = await import('undici');
      return (await withDispatcher(url, { ...init, dispatcher: creds.dispatcher } as never)) as unknown as Response;
    }
    return await fetch(url, init);
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
export function redirectTarget(current: URL, location: string | null, where: string, method = 'GET'): URL {
  const refuse = (why: string) => new HttpArtifactError(`${method} ${where}: refusing the redirect from ${redact(current.href)}: ${why}`);
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
function parseUrl(url: string, where: string, method = 'GET'): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new HttpArtifactError(`${method} ${where}: not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new HttpArtifactError(`${method} ${where}: only http and https URLs are ${method === 'GET' ? 'fetched' : 'written to'}`);
  if (u.username || u.password)
    throw new HttpArtifactError(`${method} ${where}: the URL carries credentials; give them with auth.basicAuth (Secrets) instead`);
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
