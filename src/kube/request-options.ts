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
