/**
 * Reads an image's ENTRYPOINT and CMD from its registry with the OCI distribution API: the
 * manifest (an index or manifest list is narrowed to the platform's entry), then the config blob
 * it points to, whose digest is checked. Authentication is the registries' usual dance: ask
 * anonymously; on 401, follow the `WWW-Authenticate` challenge — Basic with the pull secret's
 * credential, or Bearer with a token from the named realm (asked with that credential, or
 * anonymously for public repositories).
 *
 * Bounded: every request times out, bodies are capped, at most 5 redirects are followed, and a
 * redirect to another origin (blob storage) never carries the Authorization header. Registries
 * are reached over HTTPS unless listed as insecure (`--insecure-registry`), which is also what
 * keeps a workflow from pointing the controller at plain-HTTP addresses inside the cluster.
 * Redirects (of manifests, blobs and the token request) keep that rule of the first hop: one to
 * `https:` is followed anywhere, one to `http:` only when its own host is listed as insecure, and
 * any other is refused — an HTTPS registry cannot send the controller to a plain-HTTP address,
 * nor an insecure one to another, unlisted host.
 *
 * A tenant chooses the image, hence the host:port asked, so what the lookup says about a failure
 * must not make the controller a port scanner or a reader of internal services. A RegistryError's
 * `message` (what reaches the workflow) is therefore in plugflow's own words and carries nothing
 * the remote sent: no HTTP status, no network error text, no byte of a body, no URL it named. Every
 * failure of the remote (unreachable, refused or reset connection, timeout, any status other than
 * 200/401/403 — 404 included —, a body that is not JSON or not a manifest, digest mismatches, too
 * many redirects, an oversized body) has ONE message per registry, `unreadable`. The only other
 * messages are about the user's own configuration and name nothing the remote sent:
 * - the registry refused the pull secret's credentials (or an anonymous pull): 401/403, which
 *   tells the user which secret to fix (`unauthorized`; no status number, not the token service's
 *   host, which the registry named);
 * - a redirect or token service that is not HTTPS was refused (the operator's insecure list);
 * - the image's index has no manifest for the platform the node selector asks for (the platforms
 *   it has are the remote's and go to the log only).
 * Those say that the host answered 401/403, a redirect, or a registry's index, which a host that is
 * not a registry seldom does; that is the price of telling users what to fix. Everything the remote
 * said (status, error text and code, a short excerpt of the body, the URLs) is in `detail`, for
 * the controller's log only.
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import type { ImageReference } from './image-reference.js';
import type { RegistryCredential } from './pull-credentials.js';

/** What runs when a container has no `command` (Kubernetes: ENTRYPOINT, then `args` or else CMD). */
export interface ImageCommand {
  entrypoint: string[];
  cmd: string[];
}

export interface ImageLookup extends ImageCommand {
  /** Digest of the manifest the reference resolved to (a platform's manifest for an index). */
  digest: string;
}

export interface RegistryOptions {
  /** Hosts (host:port) reached over plain HTTP, as first hop or redirect target. */
  insecureHosts?: ReadonlySet<string>;
  timeoutMs?: number;
  /** The platform chosen from a multi-platform index (default linux and this process's architecture). */
  platform?: { os: string; architecture: string };
}

/**
 * A lookup that failed. `message` is what the workflow may read: plugflow's words, nothing the
 * remote sent (see the module comment); `detail` is everything known, for the controller's log.
 */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  /** The registry refused the (missing or given) credentials: 401 or 403. */
  readonly unauthorized: boolean;
  /** What happened, with what the remote sent (status, error, body excerpt): for the log only. */
  readonly detail: string;
  constructor(message: string, opts: { unauthorized?: boolean; detail?: string } = {}) {
    super(message);
    this.unauthorized = opts.unauthorized ?? false;
    this.detail = opts.detail ?? message;
  }
}

/** The one message of every failure of the remote: the same whatever the host answered. */
export function unreadableMessage(host: string): string {
  return `its registry ${host} could not be read (unreachable, no such repository or tag, or an answer that is not a registry's; the controller's log has the details)`;
}

/** The message of a refused redirect or token service that is not HTTPS; names the image's registry, never the target. */
export function notHttpsMessage(host: string, what: 'redirect' | 'token service'): string {
  return what === 'redirect'
    ? `its registry ${host} redirected to an address that is not HTTPS: a redirect to plain HTTP is not followed unless its host is itself an insecure registry (--insecure-registry)`
    : `its registry ${host} names a token service that is not HTTPS: plain HTTP is not used unless its host is itself an insecure registry (--insecure-registry)`;
}

const MAX_BODY = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const EXCERPT_BYTES = 200;
const MANIFEST_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
const INDEX_TYPES = new Set(MANIFEST_TYPES.slice(0, 2));

interface Descriptor {
  mediaType?: string;
  digest?: string;
  platform?: { os?: string; architecture?: string; variant?: string };
}

type Headers = Record<string, string | string[] | undefined>;
interface Response {
  status: number;
  body: Buffer;
  headers: Headers;
  /** Where the answer came from (after redirects). */
  url: URL;
}

export function defaultPlatform(): { os: string; architecture: string } {
  const arch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', ia32: '386' };
  return { os: 'linux', architecture: arch[process.arch] ?? process.arch };
}

/** The image's entrypoint and cmd, and the digest they were read from. */
export async function fetchImageCommand(
  ref: ImageReference,
  credential: RegistryCredential | undefined,
  opts: RegistryOptions = {},
): Promise<ImageLookup> {
  const session = new RegistrySession(ref, credential, opts);
  const platform = opts.platform ?? defaultPlatform();
  const first = await session.manifest(ref.reference);
  const mediaType = first.mediaType;
  let { body, digest } = first;
  let manifest = session.json(body, 'manifest', first.url) as { mediaType?: string; manifests?: Descriptor[]; config?: Descriptor };
  if (INDEX_TYPES.has(mediaType) || INDEX_TYPES.has(manifest.mediaType ?? '') || Array.isArray(manifest.manifests)) {
    const entries = Array.isArray(manifest.manifests) ? manifest.manifests : [];
    const pick = entries.find((m) => m?.platform?.os === platform.os && m.platform?.architecture === platform.architecture);
    if (typeof pick?.digest !== 'string' || !pick.digest) {
      const have = entries.map((m) => `${m?.platform?.os ?? '?'}/${m?.platform?.architecture ?? '?'}`).join(', ') || 'none';
      throw new RegistryError(
        `its registry ${ref.host} has no ${platform.os}/${platform.architecture} manifest in the image's index (the controller's log lists the platforms it has)`,
        { detail: `the index ${first.url.href} has no ${platform.os}/${platform.architecture} manifest (it has ${excerptText(have)})` },
      );
    }
    const second = await session.manifest(pick.digest);
    ({ body, digest } = second);
    manifest = session.json(body, 'manifest', second.url) as typeof manifest;
  }
  const configDigest = manifest.config?.digest;
  if (typeof configDigest !== 'string' || !configDigest)
    throw session.unreadable(`the manifest ${digest} names no config blob (a schema 1 manifest is not supported)`);
  const blob = await session.blob(configDigest);
  const config = session.json(blob.body, 'image config', blob.url) as { config?: { Entrypoint?: unknown; Cmd?: unknown } | null };
  return { digest, entrypoint: strings(config.config?.Entrypoint), cmd: strings(config.config?.Cmd) };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

/** A short, printable, quoted excerpt of what the remote sent, for the log. */
function excerptText(text: string): string {
  const clean = text.slice(0, EXCERPT_BYTES).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return `${JSON.stringify(clean)}${text.length > EXCERPT_BYTES ? '…' : ''}`;
}

function excerpt(body: Buffer): string {
  return `${body.length} bytes: ${excerptText(body.subarray(0, EXCERPT_BYTES + 1).toString('utf8'))}`;
}

/** A network error with its code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT…) and cause, for the log. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error && err.cause.message !== err.message ? ` (cause: ${describeError(err.cause)})` : '';
  return `${err.name}: ${err.message}${typeof code === 'string' && !err.message.includes(code) ? ` [${code}]` : ''}${cause}`;
}

/** One lookup's requests to one repository, keeping the token a challenge gave. */
class RegistrySession {
  private authorization: string | undefined;
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly insecureHosts: ReadonlySet<string> | undefined;

  constructor(
    private readonly ref: ImageReference,
    private readonly credential: RegistryCredential | undefined,
    opts: RegistryOptions,
  ) {
    this.insecureHosts = opts.insecureHosts;
    this.base = new URL(`${opts.insecureHosts?.has(ref.host) ? 'http' : 'https'}://${ref.host}`);
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  /** The failure of the remote, worded the same whatever it was; `detail` goes to the log. */
  unreadable(detail: string): RegistryError {
    return new RegistryError(unreadableMessage(this.ref.host), { detail });
  }

  /** The body as a JSON object; anything else is unreadable (the parse error and an excerpt go to the log). */
  json(body: Buffer, what: string, url: URL): unknown {
    let v: unknown;
    try {
      v = JSON.parse(body.toString('utf8')) as unknown;
    } catch (err) {
      throw this.unreadable(`the ${what} from ${url.href} is not JSON (${(err as Error).message}); ${excerpt(body)}`);
    }
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw this.unreadable(`the ${what} from ${url.href} is not a JSON object; ${excerpt(body)}`);
    return v;
  }

  async manifest(reference: string): Promise<{ body: Buffer; digest: string; mediaType: string; url: URL }> {
    const res = await this.get(`/v2/${this.ref.repository}/manifests/${reference}`, MANIFEST_TYPES.join(', '));
    const computed = `sha256:${createHash('sha256').update(res.body).digest('hex')}`;
    if (reference.startsWith('sha256:') && reference !== computed)
      throw this.unreadable(`the manifest ${reference} came back from ${res.url.href} with digest ${computed}`);
    const header = res.headers['docker-content-digest'];
    const digest = reference.includes(':') ? reference : typeof header === 'string' && header ? header : computed;
    const type = res.headers['content-type'];
    return { body: res.body, digest, mediaType: (typeof type === 'string' ? type : '').split(';')[0]!.trim(), url: res.url };
  }

  async blob(digest: string): Promise<{ body: Buffer; url: URL }> {
    const res = await this.get(`/v2/${this.ref.repository}/blobs/${digest}`, '*/*');
    const [alg, hex] = digest.split(':');
    if (alg === 'sha256' && createHash('sha256').update(res.body).digest('hex') !== hex)
      throw this.unreadable(`the blob ${digest} from ${res.url.href} does not match its digest`);
    return { body: res.body, url: res.url };
  }

  /** Who was refused, in the user's terms (which secret), never the remote's. */
  private refused(): string {
    return `its registry ${this.ref.host} refused ${this.credential ? `the credentials of ${this.credential.source}` : 'an anonymous pull'} for ${this.ref.repository}`;
  }

  private async get(path: string, accept: string): Promise<Response> {
    const url = new URL(path, this.base);
    let res = await this.send(url, accept);
    if (res.status === 401) {
      await this.answerChallenge(res.headers['www-authenticate'], res);
      res = await this.send(url, accept);
    }
    if (res.status === 401 || res.status === 403)
      throw new RegistryError(this.refused(), {
        unauthorized: true,
        detail: `${res.url.href} answered HTTP ${res.status} (${this.credential ? `credentials of ${this.credential.source}` : 'anonymous'}); ${excerpt(res.body)}`,
      });
    if (res.status !== 200) throw this.unreadable(`${res.url.href} answered HTTP ${res.status}; ${excerpt(res.body)}`);
    return res;
  }

  /** Sends a GET to the registry, following redirects; Authorization goes only to the registry's own origin. */
  private send(url: URL, accept: string): Promise<Response> {
    return this.follow(url, (target) => {
      const headers: Record<string, string> = { accept, 'user-agent': 'plugflow-controller' };
      if (target.origin === this.base.origin && this.authorization) headers.authorization = this.authorization;
      return headers;
    });
  }

  /** May a redirect go to `url`? HTTPS anywhere; plain HTTP only to a host listed as insecure. */
  private allowed(url: URL): boolean {
    if (url.protocol === 'https:') return true;
    if (url.protocol !== 'http:' || !this.insecureHosts) return false;
    return this.insecureHosts.has(url.host) || (url.port === '' && this.insecureHosts.has(`${url.hostname}:80`));
  }

  /** GETs `start`, following at most 5 redirects that `allowed` admits; `headersFor` gives each hop's headers. */
  private async follow(start: URL, headersFor: (target: URL) => Record<string, string>): Promise<Response> {
    let target = start;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      let res;
      try {
        res = await request(target, {
          method: 'GET',
          headers: headersFor(target),
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        throw this.unreadable(`GET ${target.href} failed: ${describeError(err)}`);
      }
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location) {
        await res.body.dump().catch(() => undefined);
        const raw = Array.isArray(location) ? location[0]! : String(location);
        let next: URL;
        try {
          next = new URL(raw, target);
        } catch {
          throw this.unreadable(`${target.href} answered HTTP ${res.statusCode} with a Location that is not a URL: ${excerptText(raw)}`);
        }
        if (!this.allowed(next))
          throw new RegistryError(notHttpsMessage(this.ref.host, 'redirect'), {
            detail: `${target.href} answered HTTP ${res.statusCode} redirecting to ${excerptText(next.href)}, which is neither HTTPS nor an insecure registry`,
          });
        target = next;
        continue;
      }
      const body = await this.read(res.body, target);
      return { status: res.statusCode, body, headers: res.headers, url: target };
    }
    throw this.unreadable(`more than ${MAX_REDIRECTS} redirects from ${start.href}`);
  }

  /** The whole body, at most MAX_BODY bytes; a reset or timeout while reading is unreadable too. */
  private async read(body: AsyncIterable<Buffer>, url: URL): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of body) {
        size += c.length;
        if (size > MAX_BODY) throw this.unreadable(`${url.href} sent more than ${MAX_BODY} bytes for one object`);
        chunks.push(c);
      }
    } catch (err) {
      if (err instanceof RegistryError) throw err;
      throw this.unreadable(`reading the body of ${url.href} failed: ${describeError(err)}`);
    }
    return Buffer.concat(chunks);
  }

  /** Sets the Authorization a 401's challenge asks for; no usable challenge is an unauthorized error. */
  private async answerChallenge(header: string | string[] | undefined, challenged: Response): Promise<void> {
    const challenge = parseChallenge(Array.isArray(header) ? header[0] : header);
    const basic = this.credential
      ? `Basic ${Buffer.from(`${this.credential.username}:${this.credential.password}`).toString('base64')}`
      : undefined;
    if (challenge?.scheme === 'basic') {
      if (!basic)
        throw new RegistryError(this.refused(), {
          unauthorized: true,
          detail: `${challenged.url.href} asks for credentials (Basic) and no pull secret has any for it`,
        });
      this.authorization = basic;
      return;
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm)
      throw new RegistryError(this.refused(), {
        unauthorized: true,
        detail: `${challenged.url.href} answered 401 without a challenge plugflow can answer: ${excerptText(String(header ?? ''))}`,
      });
    let realm: URL;
    try {
      realm = new URL(challenge.params.realm);
    } catch {
      throw this.unreadable(`${challenged.url.href} named a token realm that is not a URL: ${excerptText(challenge.params.realm)}`);
    }
    // Credentials and requests go to plain HTTP only where the operator allowed it.
    if (!this.allowed(realm))
      throw new RegistryError(notHttpsMessage(this.ref.host, 'token service'), {
        detail: `${challenged.url.href} named the token realm ${excerptText(realm.origin)}, which is neither HTTPS nor an insecure registry`,
      });
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    realm.searchParams.set('scope', `repository:${this.ref.repository}:pull`);
    const res = await this.follow(realm, (target) => ({
      'user-agent': 'plugflow-controller',
      // The pull secret's credential goes to the realm's own origin, never to where it redirects.
      ...(basic && target.origin === realm.origin ? { authorization: basic } : {}),
    }));
    if (res.status === 401 || res.status === 403)
      throw new RegistryError(this.refused(), {
        unauthorized: true,
        detail: `the token service ${res.url.href} answered HTTP ${res.status} (${this.credential ? `credentials of ${this.credential.source}` : 'anonymous'}); ${excerpt(res.body)}`,
      });
    if (res.status !== 200) throw this.unreadable(`the token service ${res.url.href} answered HTTP ${res.status}; ${excerpt(res.body)}`);
    const tok = this.json(res.body, 'token response', res.url) as { token?: unknown; access_token?: unknown };
    const token = typeof tok.token === 'string' ? tok.token : typeof tok.access_token === 'string' ? tok.access_token : '';
    if (!token) throw this.unreadable(`the token service ${res.url.href} returned no token`);
    this.authorization = `Bearer ${token}`;
  }
}

/** `Bearer realm="https://auth/token",service="reg"` → scheme and parameters (RFC 7235, one challenge). */
export function parseChallenge(header: string | undefined): { scheme: string; params: Record<string, string> } | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  const re = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))\s*,?/g;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[2]!))) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return { scheme: m[1]!.toLowerCase(), params };
}
