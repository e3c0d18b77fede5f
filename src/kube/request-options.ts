/**
 * The shapes of the client's requests (list, watch, write options) and how they become a query
 * string. Separate from client.ts so the client file stays about making the calls.
 */

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface ObjectList<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  /** Called once the server accepted the watch (status 200), before any event. */
  onOpen?: () => void;
}

/** One line of a watch stream. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Record<string, unknown>;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** Options of a write: `dryRun` validates and admits without storing; `fieldValidation` is the API server's unknown-field policy. */
export interface WriteOptions {
  dryRun?: boolean;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export function writeQuery(o: WriteOptions | undefined): Query | undefined {
  if (!o?.dryRun && !o?.fieldValidation) return undefined;
  return { dryRun: o.dryRun ? 'All' : undefined, fieldValidation: o.fieldValidation };
}

/** `path?query`, leaving out unset and empty values. */
export function withQuery(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The verbs the client records (RBAC's names). */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** Verbs that change something on the server. */
export const WRITE_VERBS: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

export interface RequestRecord {
  verb: Verb;
  /** `plural[.group][/subresource]`. */
  resource: string;
  /** HTTP status; 0 for a transport failure. */
  code: number;
  durationMs: number;
}

export interface KubeClientOptions {
  /** Called after every request (watches: when they start streaming or fail to). */
  onRequest?: (r: RequestRecord) => void;
  /** Maximum parallel connections for ordinary requests (watches use their own pool). */
  connections?: number;
  /** Timeout of an ordinary request, headers and body. */
  timeoutMs?: number;
  userAgent?: string;
}

/**
 * Who a call is made as: the client's own credentials (its kubeconfig), a caller's bearer token
 * used as-is, or a service account impersonated with the client's own credentials. A token
 * identity never gets Basic auth, a client certificate or the kubeconfig's headers: only
 * `Authorization: Bearer <token>`. An impersonated service account gets the API server's fixed
 * groups for it (`system:serviceaccounts`, `system:serviceaccounts:<ns>`), so its RBAC bindings
 * apply exactly as to the account's own token; the client needs `impersonate` on serviceaccounts.
 */
export type Identity = { kind: 'own' } | { kind: 'token'; token: string } | { kind: 'serviceAccount'; namespace: string; name: string };

export const OWN_IDENTITY: Identity = { kind: 'own' };

/** Options of a delete. Preconditions: `uid`, and `resourceVersion` (only if the object is still at it, else a conflict). */
export interface DeleteOptions {
  uid?: string;
  resourceVersion?: string;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}
