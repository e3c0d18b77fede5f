/**
 * Who a request acts as.
 *
 * - `client` mode: every call carries `Authorization: Bearer <token>`, and the server makes its
 *   Kubernetes calls with that token as-is, so the API server's RBAC decides. No header, another
 *   scheme or an empty token → 401 here; a token the API server rejects → 401 from the first
 *   call made with it.
 * - `server` mode: no header needed; every call uses the server's own account.
 *
 * The token itself never leaves this module except inside the Identity handed to KubeRest: logs
 * and metrics see only `caller.id`, a short hash.
 */
import { createHash } from 'node:crypto';
import { GROUP, PLURAL } from '../api/index.js';
import { ApiError, Code, fromKube, unauthenticated } from './errors.js';
import { KubeApiError, SERVER_IDENTITY, type Identity, type KubeRest } from './kube-rest.js';

export type AuthMode = 'client' | 'server';

export interface Caller {
  identity: Identity;
  /** Safe to log: `server`, or `token:` and the first 12 hex digits of the token's SHA-256. */
  id: string;
}

const SERVER_CALLER: Caller = { identity: SERVER_IDENTITY, id: 'server' };

interface CacheEntry {
  expires: number;
  verdict: Promise<ApiError | undefined>;
  /** Set once the verdict is known, so cached answers need no promise. */
  settled?: boolean;
  refusal?: ApiError;
}

export interface AuthOptions {
  mode: AuthMode;
  kube: KubeRest;
  /** How long an allowed access review is reused per token and namespace (default 10 s). */
  allowTtlMs?: number;
  /** How long a refusal (401/403) is reused (default 2 s, so a new grant shows quickly). */
  denyTtlMs?: number;
  /** Most tokens×namespaces remembered; the oldest are dropped beyond it. */
  maxEntries?: number;
}

export class Authenticator {
  readonly mode: AuthMode;
  private readonly kube: KubeRest;
  private readonly allowTtl: number;
  private readonly denyTtl: number;
  private readonly maxEntries: number;
  private readonly reviews = new Map<string, CacheEntry>();
  private readonly ids = new Map<string, string>();

  constructor(opts: AuthOptions) {
    this.mode = opts.mode;
    this.kube = opts.kube;
    this.allowTtl = opts.allowTtlMs ?? 10_000;
    this.denyTtl = opts.denyTtlMs ?? 2_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** The caller of a request from its Authorization header; throws 401 in client mode without one. */
  callerOf(authorization: string | undefined): Caller {
    if (this.mode === 'server') return SERVER_CALLER;
    if (!authorization) throw unauthenticated('this server runs with --auth-mode=client: send the header "Authorization: Bearer <token>"');
    const space = authorization.indexOf(' ');
    const scheme = space < 0 ? authorization : authorization.slice(0, space);
    const token = space < 0 ? '' : authorization.slice(space + 1).trim();
    if (scheme.toLowerCase() !== 'bearer') throw unauthenticated('the Authorization header must use the Bearer scheme: "Authorization: Bearer <token>"');
    if (!token) throw unauthenticated('the Authorization header carries an empty bearer token');
    return { identity: { kind: 'token', token }, id: this.idOf(token) };
  }

  /**
   * Checks that the caller may list WorkflowEventBindings in the namespace (a
   * SelfSubjectAccessReview made with the caller's token, cached briefly): only such a caller
   * may trigger the bindings there. Throws 401 for a token the API server rejects, 403 when
   * the review says no. Server mode: always allowed.
   */
  async requireEventAccess(caller: Caller, namespace: string): Promise<void> {
    const refusal = await this.eventAccess(caller, namespace);
    if (refusal) throw refusal;
  }

  /**
   * The same check without a promise when the answer is cached (the event endpoint's hot path):
   * `undefined` = allowed, an ApiError = refused, a Promise = asking the API server.
   */
  eventAccess(caller: Caller, namespace: string): ApiError | undefined | Promise<ApiError | undefined> {
    if (caller.identity.kind !== 'token') return undefined;
    const key = `${caller.identity.token}\u0000${namespace}`;
    const now = Date.now();
    let entry = this.reviews.get(key);
    if (!entry || entry.expires < now) {
      const fresh: CacheEntry = { expires: now + this.allowTtl, verdict: this.review(caller.identity, namespace) };
      this.remember(key, fresh);
      // A refusal is reused for a shorter time; a transient failure not at all.
      void fresh.verdict.then((v) => {
        fresh.settled = true;
        fresh.refusal = v;
        if (v) fresh.expires = v.code === Code.Unauthenticated || v.code === Code.PermissionDenied ? Date.now() + this.denyTtl : 0;
      });
      entry = fresh;
    }
    return entry.settled ? entry.refusal : entry.verdict;
  }

  private async review(identity: Identity, namespace: string): Promise<ApiError | undefined> {
    try {
      const res = await this.kube.call<{ status?: { allowed?: boolean; reason?: string } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        identity,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace, verb: 'list', group: GROUP, resource: PLURAL.workflowEventBinding } },
        },
      });
      if (res.status?.allowed) return undefined;
      return new ApiError(
        Code.PermissionDenied,
        `the token may not list ${PLURAL.workflowEventBinding}.${GROUP} in namespace "${namespace}", so it may not send events there`,
      );
    } catch (err) {
      if (err instanceof KubeApiError) return fromKube(err);
      return new ApiError(Code.Unavailable, `could not review the token's rights: ${(err as Error).message}`, { 'retry-after': '1' });
    }
  }

  private remember(key: string, entry: CacheEntry): void {
    if (this.reviews.size >= this.maxEntries) {
      const oldest = this.reviews.keys().next().value;
      if (oldest !== undefined) this.reviews.delete(oldest);
    }
    this.reviews.set(key, entry);
  }

  private idOf(token: string): string {
    let id = this.ids.get(token);
    if (!id) {
      id = `token:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
      if (this.ids.size >= this.maxEntries) this.ids.clear();
      this.ids.set(token, id);
    }
    return id;
  }
}
