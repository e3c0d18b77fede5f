/**
 * OAuth2 for http artifacts (`http.auth.oauth2`): the client-credentials grant. The client id,
 * the client secret and the token URL come from Secrets (environment variables of the init or
 * wait container, named by the plan); one token is asked for per artifact and sent as
 * `Authorization: Bearer <token>` — to the artifact's own origin only (http.ts decides where).
 *
 * The token request is a form POST to the token URL with `grant_type=client_credentials`, the
 * scopes space-separated in `scope` and the endpoint parameters added (they may replace
 * grant_type, nothing else). The client authenticates with HTTP basic auth first and, when the
 * endpoint refuses that (400 or 401), once more with client_id and client_secret in the form, as
 * endpoints differ in what they accept. The token endpoint's redirects are not followed: the
 * client secret goes to the URL the Secret names and nowhere else.
 *
 * Errors never hold the secrets nor the token URL (it is a Secret value too): they name the
 * field, the HTTP status and the endpoint's OAuth2 error code.
 */
import type { OAuth2Source } from './plan-http.js';

export class OAuth2Error extends Error {}

const TIMEOUT_MS = 60_000;

/** Reads the plan's variables; a missing or empty one is an error naming its field. */
function credentials(src: OAuth2Source, env: NodeJS.ProcessEnv): { id: string; secret: string; tokenUrl: URL } {
  const get = (name: string, field: string): string => {
    const v = env[name];
    if (v === undefined || v === '')
      throw new OAuth2Error(`http.auth.oauth2.${field} is not available (its Secret key is missing or empty)`);
    return v;
  };
  const id = get(src.clientIdEnv, 'clientIDSecret');
  const secret = get(src.clientSecretEnv, 'clientSecretSecret');
  const text = get(src.tokenUrlEnv, 'tokenURLSecret').trim();
  let tokenUrl: URL;
  try {
    tokenUrl = new URL(text);
  } catch {
    throw new OAuth2Error('http.auth.oauth2.tokenURLSecret does not hold a URL');
  }
  if (tokenUrl.protocol !== 'http:' && tokenUrl.protocol !== 'https:')
    throw new OAuth2Error('http.auth.oauth2.tokenURLSecret must hold an http or https URL');
  return { id, secret, tokenUrl };
}

/** The form of the token request; client credentials in it only when `inBody`. */
export function tokenForm(src: OAuth2Source, id: string, secret: string, inBody: boolean): URLSearchParams {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (src.scopes?.length) form.set('scope', src.scopes.join(' '));
  const given = new Set<string>();
  for (const p of src.endpointParams ?? []) {
    if (p.key !== 'grant_type' && form.has(p.key) && !given.has(p.key))
      throw new OAuth2Error(`http.auth.oauth2.endpointParams may not set ${JSON.stringify(p.key)}: scopes set it`);
    if (!given.has(p.key)) form.delete(p.key);
    given.add(p.key);
    form.append(p.key, p.value ?? '');
  }
  if (inBody) {
    form.set('client_id', id);
    form.set('client_secret', secret);
  }
  return form;
}

/** Asks the token endpoint for an access token (client-credentials grant). */
export async function fetchToken(src: OAuth2Source, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { id, secret, tokenUrl } = credentials(src, env);
  let reply = await post(tokenUrl, tokenForm(src, id, secret, false), basic(id, secret));
  if (reply.status === 400 || reply.status === 401) {
    await reply.body?.cancel();
    reply = await post(tokenUrl, tokenForm(src, id, secret, true));
  }
  const text = await reply.text().catch(() => '');
  const data = parseReply(text, reply.headers.get('content-type') ?? '');
  if (reply.status >= 300 && reply.status < 400)
    throw new OAuth2Error(`the OAuth2 token endpoint (tokenURLSecret) answered with a redirect (HTTP ${reply.status}); give its final URL`);
  if (!reply.ok) throw new OAuth2Error(`the OAuth2 token endpoint (tokenURLSecret) answered HTTP ${reply.status}${errorCode(data)}`);
  const token = data.access_token;
  if (typeof token !== 'string' || token === '')
    throw new OAuth2Error('the OAuth2 token endpoint (tokenURLSecret) answered without an access_token');
  const type = typeof data.token_type === 'string' ? data.token_type : '';
  if (type !== '' && type.toLowerCase() !== 'bearer')
    throw new OAuth2Error(`the OAuth2 token endpoint (tokenURLSecret) gave a token of type ${safe(type)}; only bearer tokens are sent`);
  if (/[\r\n]/.test(token)) throw new OAuth2Error('the OAuth2 token endpoint (tokenURLSecret) gave a token that is not one line');
  return token;
}

/** `Basic` credentials as RFC 6749 (2.3.1) asks: id and secret form-encoded first. */
function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

async function post(url: URL, form: URLSearchParams, authorization?: string): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    ...(authorization ? { authorization } : {}),
  };
  try {
    return await fetch(url, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    // A cause's message may name the host and port, which the Secret holds: its code is shown,
    // else its message without them.
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const scrub = (m: string) => [url.href, url.host, url.hostname].reduce((t, s) => t.split(s).join('…'), m);
    const why =
      cause?.code ??
      ((err as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000}s` : scrub(cause?.message ?? (err as Error).message));
    throw new OAuth2Error(`the OAuth2 token request (tokenURLSecret) failed: ${why}`);
  }
}

/** The reply as JSON or as a form (both are in use); {} when it is neither. */
function parseReply(text: string, contentType: string): Record<string, unknown> {
  if (/application\/x-www-form-urlencoded|text\/plain/i.test(contentType)) return Object.fromEntries(new URLSearchParams(text).entries());
  try {
    const data: unknown = JSON.parse(text);
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The endpoint's OAuth2 error code (`invalid_client`, …), when it gives a plain one. */
function errorCode(data: Record<string, unknown>): string {
  return typeof data.error === 'string' && /^[\w.-]{1,64}$/.test(data.error) ? ` (${data.error})` : '';
}

function safe(s: string): string {
  return /^[\w.-]{1,32}$/.test(s) ? s : JSON.stringify(s.slice(0, 32));
}
