/**
 * Errors of the Kubernetes API, classified the way callers decide what to do: a missing object,
 * a lost optimistic-concurrency race, an object that already exists, an expired resource version,
 * or a transient failure worth retrying. Every reply that is not 2xx becomes an ApiError carrying
 * the HTTP status and the Status object's `reason`, so no caller parses bodies itself.
 */

/** A non-2xx reply of the API server (or a transport failure, code 0). */
export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 for a transport failure (connection refused, reset, timeout). */
    readonly code: number,
    /** The Status `reason` (NotFound, Conflict, AlreadyExists, Expired, ...) or ''. */
    readonly reason: string,
    message: string,
    /** `VERB path` of the request, for logs. */
    readonly request: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** `VERB path: status reason: message`, used by errorMessage(). */
  describe(): string {
    return `${this.request}: ${this.code || 'transport error'}${this.reason ? ` ${this.reason}` : ''}: ${this.message}`;
  }
}

/**
 * The reason of a 403 that refused the controller acting as a namespace's service account (the
 * namespace has not bound plugflow-controller-impersonate): not the account's own rights.
 */
export const IMPERSONATION_REFUSED = 'ImpersonationRefused';

export function isImpersonationRefused(err: unknown): boolean {
  return asApiError(err)?.reason === IMPERSONATION_REFUSED;
}

function asApiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : undefined;
}

export function isNotFound(err: unknown): boolean {
  return asApiError(err)?.code === 404;
}

/** 403: RBAC (or an admission webhook) refused the caller. */
export function isForbidden(err: unknown): boolean {
  return asApiError(err)?.code === 403;
}

/** 409 with reason AlreadyExists: a create of an object that is there. */
export function isAlreadyExists(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 409 && e.reason === 'AlreadyExists';
}

/** 409 that is not AlreadyExists: a write based on a stale resourceVersion. */
export function isConflict(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 409 && e.reason !== 'AlreadyExists';
}

/** 410 Gone / reason Expired: the resource version is too old; the caller must list again. */
export function isGone(err: unknown): boolean {
  const e = asApiError(err);
  return e?.code === 410 || e?.reason === 'Expired' || e?.reason === 'Gone';
}

/**
 * A write the API server (or etcd behind it) refuses because the object or request is too large:
 * 413 `Request entity too large`, or etcd's `ResourceExhausted … (2725715 vs. 2097152)` / `request
 * is too large`, which reach the client as 500s. The same write can never succeed, so it is final.
 */
export function isTooLarge(err: unknown): boolean {
  const e = asApiError(err);
  if (!e || e.code === 0) return false;
  if (e.code === 413 || e.reason === 'RequestEntityTooLarge') return true;
  return e.code >= 500 && /ResourceExhausted|request is too large|entity too large/i.test(e.message);
}

/**
 * The one "may a retry cure this?" test of every shell: a transport failure (code 0: refused,
 * reset, timed out), throttling (429) or server-side trouble (5xx) — but not a too-large object.
 * Only a failed call to the API server can be transient: anything else (a bug, a refusal made
 * before any call) is final, so a retry loop never spins on it.
 */
export function isTransient(err: unknown): boolean {
  const e = asApiError(err);
  if (!e) return false;
  if (isTooLarge(e)) return false;
  return e.code === 0 || e.code === 429 || e.code >= 500;
}

/** The message of a transport failure (connection refused, reset, timeout), with its code. */
export function transportMessage(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.cause?.code ?? e?.code;
  const msg = e?.cause?.message ?? e?.message ?? String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

/** Builds an ApiError from a Status body (or whatever text came back). */
export function toApiError(code: number, text: string, request: string): ApiError {
  let reason = '';
  let message = text.slice(0, 500) || `HTTP ${code}`;
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string; code?: number };
    reason = status.reason ?? '';
    if (status.message) message = status.message;
  } catch {
    /* not a Status object */
  }
  return new ApiError(code, reason, message, request);
}
