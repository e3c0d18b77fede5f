/**
 * Who a request acts as, decided from its headers alone — before any body is read.
 *
 * - `client` mode: every call carries `Authorization: Bearer <token>`, and the server makes its
 *   Kubernetes calls with that token as-is, so the API server's RBAC decides. No header, another
 *   scheme, an empty token or one over MAX_TOKEN_BYTES → 401 here. What can be asked before the
 *   body is (may this token create workflows / list bindings in the namespace?) is asked with a
 *   SelfSubjectAccessReview, cached per token hash in a bounded cache; reviews of tokens never
 *   seen allowed are rate-limited (a token bucket; over it 429 with Retry-After), so a flood of
 *   made-up tokens costs neither the API server nor our heap.
 * - `server` mode: every call uses the server's own account, so the server itself is the guard:
 *   the caller must present the shared bearer token (`--server-token-file`, compared in constant
 *   time), and the namespace must be in the allow-list (`--allowed-namespaces`) when one is
 *   given. Without a token the server refuses to start unless `--unsafe-server-mode-without-auth`.
 *
 * The token itself never leaves this module except inside the Identity handed to the Kubernetes
 * client (src/kube/client.ts `as(identity)`, which sends it only as that caller's bearer token): logs
 * and metrics see only `caller.id`, a short hash; caches are keyed by the token's SHA-256.
 */
import { createHash, hash as oneShotHash, timingSafeEqual } from 'node:crypto';
import { GROUP, PLURAL } from '../api/index.js';
import { HttpError, Code, fromKube, tooManyRequests, unauthenticated } from './errors.js';
import { OWN_IDENTITY, type Identity, type KubeClient } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { BoundedCache, TokenBucket } from '../kube/rate-limits.js';
import { SELF_SUBJECT_ACCESS_REVIEWS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';

export type AuthMode = 'client' | 'server';

/** Longest bearer token accepted (bytes); Kubernetes service-account and OIDC tokens are far shorter. */
export const MAX_TOKEN_BYTES = 8192;

export interface Caller {
  identity: Identity;
  /** Safe to log: `server`, or `token:` and the first 12 hex digits of the token's SHA-256. */
  id: string;
  /** The token's SHA-256 (hex): the key of every cache. Empty for the server's own account. */
  hash: string;
  /** Where the request came from (the peer address, IPv6 by /64); '' when unknown. */
  source?: string;
}

const SERVER_CALLER: Caller = { identity: OWN_IDENTITY, id: 'server', hash: '' };

/** What a SelfSubjectAccessReview asks: a verb on a plugflow resource in a namespace. */
export interface Access {
  verb: string;
  resource: string;
  /** API group (default plugflow's) and subresource, e.g. `''` and `log` of `pods`. */
  group?: string;
  subresource?: string;
  /** What the refusal says the caller may not do, e.g. "send events there". */
  purpose: string;
}

export const EVENT_ACCESS: Access = { verb: 'list', resource: PLURAL.workflowEventBinding, purpose: 'so it may not send events there' };
export const CREATE_WORKFLOW_ACCESS: Access = {
  verb: 'create',
  resource: PLURAL.workflow,
  purpose: 'so it may not submit workflows there',
};

interface CacheEntry {
  expires: number;
  verdict: Promise<HttpError | undefined>;
  /** Set once the verdict is known, so cached answers need no promise. */
  settled?: boolean;
  refusal?: HttpError;
}

export interface AuthOptions {
  mode: AuthMode;
  kube: KubeClient;
  /** Server mode: the shared bearer token callers must present. */
  serverToken?: string;
  /** Server mode: refuse no caller (only with an explicit unsafe flag). */
  unsafeServerModeWithoutAuth?: boolean;
  /** Namespaces requests may name (any mode); empty or undefined: all. */
  allowedNamespaces?: readonly string[];
  /** How long an allowed access review is reused per token and namespace (default 10 s). */
  allowTtlMs?: number;
  /** How long a refusal (401/403) is reused (default 2 s, so a new grant shows quickly). */
  denyTtlMs?: number;
  /** Most (token, namespace, access) verdicts remembered, oldest dropped first (default 10,000). */
  maxEntries?: number;
  /** Access reviews of tokens not yet seen allowed, per second (default 50) … */
  unknownReviewsPerSecond?: number;
  /** … and at once (default 100); beyond it 429. */
  unknownReviewBurst?: number;
  /** The same, per source address and token shape (default 10 a second, 20 at once), spent first. */
  sourceReviewsPerSecond?: number;
  sourceReviewBurst?: number;
}

export const AUTH_DEFAULTS = {
  allowTtlMs: 10_000,
  denyTtlMs: 2_000,
  maxEntries: 10_000,
  unknownReviewsPerSecond: 50,
  unknownReviewBurst: 100,
  sourceReviewsPerSecond: 10,
  sourceReviewBurst: 20,
};

export class Authenticator {
  readonly mode: AuthMode;
  private readonly kube: KubeClient;
  private readonly serverTokenHash?: Buffer;
  private readonly allowed?: ReadonlySet<string>;
  private readonly allowTtl: number;
  private readonly denyTtl: number;
  private readonly reviews: BoundedCache<CacheEntry>;
  /** Token hashes the API server has said yes for: their re-reviews skip the rate limit. */
  private readonly known: BoundedCache<true>;
  private readonly bucket: TokenBucket;
  /**
   * Buckets per (source, token shape), spent before the shared one: a flood of made-up tokens
   * from one address, or of one shape, empties its own bucket and leaves the shared one — and so
   * new, valid callers elsewhere — alone.
   */
  private readonly perSource: BoundedCache<TokenBucket>;
  private readonly sourceRate: [number, number];

  constructor(opts: AuthOptions) {
    this.mode = opts.mode;
    this.kube = opts.kube;
    if (opts.mode === 'server') {
      if (opts.serverToken !== undefined) {
        if (opts.serverToken.trim() === '') throw new Error('the server token is empty: put a long random secret in --server-token-file');
        this.serverTokenHash = sha256(opts.serverToken.trim());
      } else if (!opts.unsafeServerModeWithoutAuth) {
        throw new Error(
          "--auth-mode=server runs every call with the server's own account, so it needs a guard: give --server-token-file (a shared bearer token callers must send) " +
            'and preferably --allowed-namespaces; to run it open to anyone who reaches the port, pass --unsafe-server-mode-without-auth',
        );
      }
    }
    if (opts.allowedNamespaces && opts.allowedNamespaces.length > 0) this.allowed = new Set(opts.allowedNamespaces);
    this.allowTtl = opts.allowTtlMs ?? AUTH_DEFAULTS.allowTtlMs;
    this.denyTtl = opts.denyTtlMs ?? AUTH_DEFAULTS.denyTtlMs;
    const max = opts.maxEntries ?? AUTH_DEFAULTS.maxEntries;
    this.reviews = new BoundedCache(max);
    this.known = new BoundedCache(max);
    this.bucket = new TokenBucket(
      opts.unknownReviewsPerSecond ?? AUTH_DEFAULTS.unknownReviewsPerSecond,
      opts.unknownReviewBurst ?? AUTH_DEFAULTS.unknownReviewBurst,
    );
    this.perSource = new BoundedCache(max);
    this.sourceRate = [
      opts.sourceReviewsPerSecond ?? AUTH_DEFAULTS.sourceReviewsPerSecond,
      opts.sourceReviewBurst ?? AUTH_DEFAULTS.sourceReviewBurst,
    ];
  }

  /** Server mode without any guard (started with the unsafe flag). */
  get unguarded(): boolean {
    return this.mode === 'server' && !this.serverTokenHash;
  }

  get allowedNamespaces(): readonly string[] | undefined {
    return this.allowed ? [...this.allowed] : undefined;
  }

  /**
   * The caller of a request from its Authorization header; throws 401 when the header does not
   * name an acceptable caller (client mode: no usable bearer token; server mode: not the shared
   * token). Cheap (one hash), so it runs before any body is read.
   */
  callerOf(authorization: string | undefined, remoteAddress?: string): Caller {
    if (this.mode === 'server' && !this.serverTokenHash) return SERVER_CALLER;
    const token = bearerToken(authorization, this.mode);
    if (this.mode === 'server') {
      if (!timingSafeEqual(sha256(token), this.serverTokenHash!))
        throw unauthenticated(
          "the bearer token is not this server's token (--auth-mode=server accepts only the token of --server-token-file)",
        );
      return SERVER_CALLER;
    }
    // One-shot hashing: no Hash object per request (this runs on every event).
    const hash = oneShotHash('sha256', token, 'hex');
    return { identity: { kind: 'token', token }, id: `token:${hash.slice(0, 12)}`, hash, source: sourceOf(remoteAddress) };
  }

  /** 403 unless the namespace is in the allow-list (when there is one); empty means every namespace. */
  checkNamespace(namespace: string): void {
    if (namespace === '') return this.checkAllNamespaces();
    if (this.allowed && !this.allowed.has(namespace)) {
      throw new HttpError(
        Code.PermissionDenied,
        `namespace "${namespace}" is not served here: this server serves only ${[...this.allowed].map((n) => `"${n}"`).join(', ')} (--allowed-namespaces)`,
      );
    }
  }

  /** 403 for a request across every namespace when the server serves only some. */
  checkAllNamespaces(): void {
    if (this.allowed) {
      throw new HttpError(
        Code.PermissionDenied,
        `this server serves only ${[...this.allowed].map((n) => `"${n}"`).join(', ')} (--allowed-namespaces): name one of them in the path`,
      );
    }
  }

  /** Throws 401/403/429 unless the caller may do `access` in the namespace. */
  async require(caller: Caller, namespace: string, access: Access): Promise<void> {
    const refusal = await this.access(caller, namespace, access);
    if (refusal) throw refusal;
  }

  /**
   * The check without a promise when the answer is cached (the event endpoint's hot path):
   * `undefined` = allowed, an HttpError = refused, a Promise = asking the API server. The
   * namespace allow-list applies in both modes; the review only to callers' tokens.
   */
  access(caller: Caller, namespace: string, access: Access): HttpError | undefined | Promise<HttpError | undefined> {
    if (this.allowed && !this.allowed.has(namespace)) {
      try {
        this.checkNamespace(namespace);
      } catch (err) {
        return err as HttpError;
      }
    }
    if (caller.identity.kind !== 'token') return undefined;
    const key = `${caller.hash}\u0000${namespace}\u0000${access.verb}\u0000${access.group ?? GROUP}\u0000${access.resource}\u0000${access.subresource ?? ''}`;
    const now = Date.now();
    let entry = this.reviews.get(key);
    if (!entry || entry.expires < now) {
      if (!this.known.get(caller.hash) && !this.mayReviewUnknown(caller, now)) {
        return tooManyRequests('too many access reviews of new tokens right now: retry in a second', 1);
      }
      const fresh: CacheEntry = { expires: now + this.allowTtl, verdict: this.review(caller.identity, namespace, access) };
      this.reviews.set(key, fresh);
      // A refusal is reused for a shorter time; a transient failure not at all.
      void fresh.verdict.then((v) => {
        fresh.settled = true;
        fresh.refusal = v;
        if (!v) this.known.set(caller.hash, true);
        else fresh.expires = v.code === Code.Unauthenticated || v.code === Code.PermissionDenied ? Date.now() + this.denyTtl : 0;
      });
      entry = fresh;
    }
    // The cache is keyed by what is asked, not why: the refusal names this caller's purpose.
    return entry.settled ? withPurpose(entry.refusal, access) : entry.verdict.then((v) => withPurpose(v, access));
  }

  /** Spends a review of a token never seen allowed: its source's and shape's bucket first, then the shared one. */
  private mayReviewUnknown(caller: Caller, now: number): boolean {
    const token = caller.identity.kind === 'token' ? caller.identity.token : '';
    const key = `${caller.source ?? ''}\u0000${tokenShape(token)}`;
    let own = this.perSource.get(key);
    if (!own) {
      own = new TokenBucket(this.sourceRate[0], this.sourceRate[1]);
      this.perSource.set(key, own);
    }
    return own.take(now) && this.bucket.take(now);
  }

  private async review(identity: Identity, namespace: string, access: Access): Promise<HttpError | undefined> {
    try {
      const res = await this.kube
        .as(identity)
        .create<{ status?: { allowed?: boolean; reason?: string } }>(SELF_SUBJECT_ACCESS_REVIEWS, undefined, {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              namespace,
              verb: access.verb,
              group: access.group ?? GROUP,
              resource: access.resource,
              subresource: access.subresource,
            },
          },
        });
      if (res.status?.allowed) return undefined;
      return new ReviewRefusal(`forbidden: the token may not ${access.verb} ${resourceName(access)} in namespace "${namespace}"`);
    } catch (err) {
      if (err instanceof ApiError && err.code !== 0) return fromKube(err);
      return new HttpError(Code.Unavailable, `could not review the token's rights: ${errorMessage(err)}`, { 'retry-after': '1' });
    }
  }
}

/**
 * The source a rate limit counts against: the peer address, IPv6 addresses by their /64 (one
 * host's share). Behind a proxy every caller shares the proxy's address; the token shape
 * (tokenShape) still separates a flood of made-up tokens from real ones.
 */
export function sourceOf(remoteAddress: string | undefined): string {
  if (!remoteAddress) return '';
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(remoteAddress);
  if (v4) return v4[1]!;
  return remoteAddress.split(':').slice(0, 4).join(':');
}

/**
 * What kind of token this is, without trusting it: `jwt` (three base64url parts whose first
 * decodes to a JSON header naming an algorithm — service-account and OIDC tokens), `opaque`
 * (anything else: static tokens, and most made-up ones), plus its length class.
 */
export function tokenShape(token: string): string {
  const size = token.length < 64 ? 'short' : token.length < 2048 ? 'medium' : 'long';
  const parts = token.split('.');
  if (parts.length === 3 && parts.every((p) => /^[A-Za-z0-9_-]+$/.test(p))) {
    try {
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { alg?: unknown };
      if (header && typeof header.alg === 'string') return `jwt/${size}`;
    } catch {
      // not JSON: opaque
    }
  }
  return `opaque/${size}`;
}

/** A refusal of the access review itself: its message gets the purpose of whoever asked. */
class ReviewRefusal extends HttpError {
  constructor(readonly base: string) {
    super(Code.PermissionDenied, base);
  }
}

function withPurpose(refusal: HttpError | undefined, access: Access): HttpError | undefined {
  return refusal instanceof ReviewRefusal ? new HttpError(Code.PermissionDenied, `${refusal.base}, ${access.purpose}`) : refusal;
}

/** `workflows.plugflow.io`, `pods/log`: how kubectl names a resource. */
function resourceName(a: Access): string {
  const group = a.group ?? GROUP;
  return `${a.resource}${a.subresource ? `/${a.subresource}` : ''}${group ? `.${group}` : ''}`;
}

/** The bearer token of an Authorization header, or 401 saying what is wrong with it. */
function bearerToken(authorization: string | undefined, mode: AuthMode): string {
  if (!authorization) throw unauthenticated(`this server runs with --auth-mode=${mode}: send the header "Authorization: Bearer <token>"`);
  const space = authorization.indexOf(' ');
  const scheme = space < 0 ? authorization : authorization.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer')
    throw unauthenticated('the Authorization header must use the Bearer scheme: "Authorization: Bearer <token>"');
  const token = space < 0 ? '' : authorization.slice(space + 1).trim();
  if (!token) throw unauthenticated('the Authorization header carries an empty bearer token');
  if (Buffer.byteLength(token) > MAX_TOKEN_BYTES)
    throw unauthenticated(`the bearer token is longer than ${MAX_TOKEN_BYTES} bytes, which no Kubernetes token is`);
  return token;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
