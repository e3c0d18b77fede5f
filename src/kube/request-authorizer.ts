/**
 * Who may read an HTTP path of ours that is not an API resource — the controller's `/metrics`,
 * which carries label values rendered from tenants' workflows — decided the way Kubernetes'
 * own components decide it (kube-rbac-proxy, controller-runtime's metrics filter): the bearer
 * token is checked with a TokenReview, then the user it names is checked with a
 * SubjectAccessReview for `get` on the non-resource URL. A Prometheus whose service account
 * has the usual `nonResourceURLs: ["/metrics"], verbs: ["get"]` passes; nobody else does.
 *
 * Verdicts are cached per token hash (allowed 30 s, refused 5 s) in a bounded cache, and reviews
 * of tokens never seen allowed are rate-limited, so a flood of made-up tokens costs neither our
 * heap nor the API server.
 */
import { hash as oneShotHash } from 'node:crypto';
import type { KubeClient } from './client.js';
import { errorMessage } from '../log/error-message.js';
import { BoundedCache, TokenBucket } from './rate-limits.js';
import { SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from './resource.js';

/** A refusal: the HTTP status to answer and a message that names what is missing. */
export interface Refusal {
  status: 401 | 403 | 429 | 503;
  message: string;
}

interface Verdict {
  expires: number;
  refusal: Refusal | undefined;
}

const ALLOW_TTL_MS = 30_000;
const DENY_TTL_MS = 5_000;
const MAX_TOKEN_BYTES = 8192;

export class RequestAuthorizer {
  private readonly verdicts = new BoundedCache<Verdict>(1000);
  private readonly inFlight = new Map<string, Promise<Refusal | undefined>>();
  private readonly unknown = new TokenBucket(5, 20);

  constructor(
    /** The process's own client: it needs `create` on tokenreviews and subjectaccessreviews. */
    private readonly kube: KubeClient,
    /** The non-resource URL and verb to review, e.g. `/metrics`, `get`. */
    private readonly path: string,
    private readonly verb = 'get',
    private readonly now: () => number = Date.now,
  ) {}

  /** undefined when the request's Authorization header names someone allowed; else why not. */
  async authorize(authorization: string | undefined): Promise<Refusal | undefined> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m)
      return {
        status: 401,
        message: `${this.path} needs "Authorization: Bearer <token>" of an account that may ${this.verb} the non-resource URL ${this.path}`,
      };
    const token = m[1]!;
    if (Buffer.byteLength(token) > MAX_TOKEN_BYTES)
      return { status: 401, message: 'the bearer token is too long to be a Kubernetes token' };
    const key = oneShotHash('sha256', token, 'hex');
    const cached = this.verdicts.get(key);
    if (cached && cached.expires > this.now()) return cached.refusal;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (!cached && !this.unknown.take(this.now()))
      return { status: 429, message: 'too many reviews of new tokens right now: retry in a second' };
    const review = this.review(token).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, review);
    const refusal = await review;
    // A failure to ask (503) is not remembered: the next scrape asks again.
    if (refusal?.status !== 503) this.verdicts.set(key, { expires: this.now() + (refusal ? DENY_TTL_MS : ALLOW_TTL_MS), refusal });
    return refusal;
  }

  private async review(token: string): Promise<Refusal | undefined> {
    try {
      const tr = await this.kube.create<{
        status?: {
          authenticated?: boolean;
          user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
        };
      }>(TOKEN_REVIEWS, undefined, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
      const user = tr.status?.user;
      if (!tr.status?.authenticated || !user?.username) return { status: 401, message: 'the bearer token is not valid for this cluster' };
      const sar = await this.kube.create<{ status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, undefined, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups ?? [],
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path: this.path, verb: this.verb },
        },
      });
      if (sar.status?.allowed) return undefined;
      return { status: 403, message: `${user.username} may not ${this.verb} the non-resource URL ${this.path}` };
    } catch (err) {
      return { status: 503, message: `could not review the token with the API server: ${errorMessage(err)}` };
    }
  }
}
