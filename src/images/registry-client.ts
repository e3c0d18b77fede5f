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
  /** Hosts (host:port) reached over plain HTTP. */
  insecureHosts?: ReadonlySet<string>;
  timeoutMs?: number;
  /** The platform chosen from a multi-platform index (default linux and this process's architecture). */
  platform?: { os: string; architecture: string };
}

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    message: string,
    /** The registry refused the (missing or given) credentials: 401 or 403. */
    readonly unauthorized = false,
  ) {
    super(message);
  }
}

const MAX_BODY = 4 * 1024 * 1024;
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
  let manifest = parseJson(body, 'manifest') as { mediaType?: string; manifests?: Descriptor[]; config?: Descriptor };
  if (INDEX_TYPES.has(mediaType) || INDEX_TYPES.has(manifest.mediaType ?? '') || Array.isArray(manifest.manifests)) {
    const entries = manifest.manifests ?? [];
    const pick = entries.find((m) => m.platform?.os === platform.os && m.platform?.architecture === platform.architecture);
    if (!pick?.digest) {
      const have = entries.map((m) => `${m.platform?.os ?? '?'}/${m.platform?.architecture ?? '?'}`).join(', ') || 'none';
      throw new RegistryError(`the image index has no ${platform.os}/${platform.architecture} manifest (it has ${have})`);
    }
    ({ body, digest } = await session.manifest(pick.digest));
    manifest = parseJson(body, 'manifest') as typeof manifest;
  }
  const configDigest = manifest.config?.digest;
  if (!configDigest) throw new RegistryError('the manifest names no config blob (a schema 1 manifest is not supported)');
  const configBody = await session.blob(configDigest);
  const config = parseJson(configBody, 'image config') as { config?: { Entrypoint?: unknown; Cmd?: unknown } | null };
  return { digest, entrypoint: strings(config.config?.Entrypoint), cmd: strings(config.config?.Cmd) };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}

function parseJson(body: Buffer, what: string): unknown {
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    if (!v || typeof v !== 'object') throw new Error('not an object');
    return v;
  } catch (err) {
    throw new RegistryError(`the ${what} is not JSON (${(err as Error).message})`);
  }
}

/** One lookup's requests to one repository, keeping the token a challenge gave. */
class RegistrySession {
  private authorization: string | undefined;
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly insecureHosts: ReadonlySet<string> | undefined;

  constructor(
    private readonly ref: ImageReference,
    private readonly credential: RegistryCredential | undefined,
    opts: RegistryOptions,
  ) {
    this.insecureHosts = opts.insecureHosts;
    this.base = `${opts.insecureHosts?.has(ref.host) ? 'http' : 'https'}://${ref.host}`;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async manifest(reference: string): Promise<{ body: Buffer; digest: string; mediaType: string }> {
    const res = await this.get(`/v2/${this.ref.repository}/manifests/${reference}`, MANIFEST_TYPES.join(', '));
    const computed = `sha256:${createHash('sha256').update(res.body).digest('hex')}`;
    if (reference.startsWith('sha256:') && reference !== computed)
      throw new RegistryError(`the manifest ${reference} came back with digest ${computed}`);
    const header = res.headers['docker-content-digest'];
    const digest = reference.includes(':') ? reference : typeof header === 'string' && header ? header : computed;
    const type = res.headers['content-type'];
    return { body: res.body, digest, mediaType: (typeof type === 'string' ? type : '').split(';')[0]!.trim() };
  }

  async blob(digest: string): Promise<Buffer> {
    const res = await this.get(`/v2/${this.ref.repository}/blobs/${digest}`, '*/*');
    const [alg, hex] = digest.split(':');
    if (alg === 'sha256' && createHash('sha256').update(res.body).digest('hex') !== hex)
      throw new RegistryError(`the blob ${digest} does not match its digest`);
    return res.body;
  }

  private async get(path: string, accept: string): Promise<{ body: Buffer; headers: Record<string, string | string[] | undefined> }> {
    let res = await this.send(`${this.base}${path}`, accept);
    if (res.status === 401) {
      await this.answerChallenge(res.headers['www-authenticate']);
      res = await this.send(`${this.base}${path}`, accept);
    }
    if (res.status === 401 || res.status === 403)
      throw new RegistryError(
        `${this.ref.host} refused ${this.credential ? `the credentials of ${this.credential.source}` : 'an anonymous pull'} (HTTP ${res.status}) for ${this.ref.repository}`,
        true,
      );
    if (res.status === 404)
      throw new RegistryError(
        `${this.ref.host} has no ${path.includes('/manifests/') ? 'manifest' : 'blob'} ${path.split('/').pop()} in ${this.ref.repository} (HTTP 404)`,
      );
    if (res.status !== 200) throw new RegistryError(`${this.ref.host} answered HTTP ${res.status} for ${path}`);
    return res;
  }

  /** Sends a GET, following redirects; Authorization goes only to the registry's own origin. */
  private async send(
    url: string,
    accept: string,
  ): Promise<{ status: number; body: Buffer; headers: Record<string, string | string[] | undefined> }> {
    let target = new URL(url);
    for (let hop = 0; hop <= 5; hop++) {
      const sameOrigin = target.origin === new URL(this.base).origin;
      const headers: Record<string, string> = { accept, 'user-agent': 'plugflow-controller' };
      if (sameOrigin && this.authorization) headers.authorization = this.authorization;
      let res;
      try {
        res = await request(target, {
          method: 'GET',
          headers,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        throw new RegistryError(`cannot reach ${target.host}: ${(err as Error).message}`);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        target = new URL(String(res.headers.location), target);
        if (target.protocol !== 'https:' && target.protocol !== 'http:')
          throw new RegistryError(`a redirect to ${target.protocol} is not followed`);
        continue;
      }
      const body = await readCapped(res.body, target.host);
      return { status: res.statusCode, body, headers: res.headers };
    }
    throw new RegistryError(`more than 5 redirects from ${url}`);
  }

  /** Sets the Authorization a 401's challenge asks for; no usable challenge is an unauthorized error. */
  private async answerChallenge(header: string | string[] | undefined): Promise<void> {
    const challenge = parseChallenge(Array.isArray(header) ? header[0] : header);
    const basic = this.credential
      ? `Basic ${Buffer.from(`${this.credential.username}:${this.credential.password}`).toString('base64')}`
      : undefined;
    if (challenge?.scheme === 'basic') {
      if (!basic) throw new RegistryError(`${this.ref.host} asks for credentials (Basic) and no pull secret has any for it`, true);
      this.authorization = basic;
      return;
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm)
      throw new RegistryError(`${this.ref.host} answered 401 without a challenge plugflow can answer`, true);
    let realm: URL;
    try {
      realm = new URL(challenge.params.realm);
    } catch {
      throw new RegistryError(`${this.ref.host} named a token realm that is not a URL`);
    }
    // Credentials and requests go to plain HTTP only where the operator allowed it.
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && this.insecureHosts?.has(realm.host)))
      throw new RegistryError(`${this.ref.host} named the token realm ${realm.origin}, which is not HTTPS nor an insecure registry`);
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    realm.searchParams.set('scope', `repository:${this.ref.repository}:pull`);
    let res;
    try {
      res = await request(realm, {
        method: 'GET',
        headers: { 'user-agent': 'plugflow-controller', ...(basic ? { authorization: basic } : {}) },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new RegistryError(`cannot reach the token service ${realm.host}: ${(err as Error).message}`);
    }
    const body = await readCapped(res.body, realm.host);
    if (res.statusCode === 401 || res.statusCode === 403)
      throw new RegistryError(
        `the token service ${realm.host} refused ${this.credential ? `the credentials of ${this.credential.source}` : 'an anonymous pull'} (HTTP ${res.statusCode})`,
        true,
      );
    if (res.statusCode !== 200) throw new RegistryError(`the token service ${realm.host} answered HTTP ${res.statusCode}`);
    const tok = parseJson(body, 'token response') as { token?: unknown; access_token?: unknown };
    const token = typeof tok.token === 'string' ? tok.token : typeof tok.access_token === 'string' ? tok.access_token : '';
    if (!token) throw new RegistryError(`the token service ${realm.host} returned no token`);
    this.authorization = `Bearer ${token}`;
  }
}

async function readCapped(body: AsyncIterable<Buffer>, host: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > MAX_BODY) throw new RegistryError(`${host} sent more than ${MAX_BODY} bytes for one object`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
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
