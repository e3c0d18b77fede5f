/**
 * Every error the server sends, in one place: the body is `{"code": <gRPC-style code>,
 * "message": "..."}` (the peer's shape, so its clients understand ours) with the HTTP status
 * that goes with the code.
 */
import { ApiError } from '../kube/errors.js';
import { OperationRefused } from '../operations/index.js';

/** gRPC status codes used in error bodies. */
export const Code = {
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
  FailedPrecondition: 9,
  Internal: 13,
  Unavailable: 14,
  Unauthenticated: 16,
} as const;
export type Code = (typeof Code)[keyof typeof Code];

/** HTTP status of each code. */
const STATUS: Record<Code, number> = {
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 413,
  // The workflow is not in a state the operation applies to (already finished, nothing waiting).
  [Code.FailedPrecondition]: 409,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.Unauthenticated]: 401,
};

export interface ErrorBody {
  code: Code;
  message: string;
}

/** An error with its reply: thrown anywhere in a route, sent by the error handler. */
export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly code: Code,
    message: string,
    /** Extra reply headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
    /** The HTTP status when it is not the code's usual one (429 for a rate limit). */
    status?: number,
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = status ?? STATUS[code];
  }

  body(): ErrorBody {
    return { code: this.code, message: this.message };
  }
}

export const badRequest = (message: string) => new HttpError(Code.InvalidArgument, message);
export const unauthenticated = (message: string) => new HttpError(Code.Unauthenticated, message);
export const notFound = (message: string) => new HttpError(Code.NotFound, message);
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new HttpError(Code.Unavailable, message, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });

/** 429 with Retry-After: a rate limit (gRPC ResourceExhausted, which gateways also map to 429). */
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new HttpError(Code.ResourceExhausted, message, { 'retry-after': String(retryAfterSeconds) }, 429);

/**
 * The API server's answer (src/kube's one ApiError), as ours: its status picks the code, its
 * message is kept; a transport failure (code 0) is a 503 naming the API server.
 */
export function fromKube(err: ApiError): HttpError {
  switch (err.code) {
    case 0:
      return unavailable(`the Kubernetes API server could not be reached: ${err.message}`, 1);
    case 400:
    case 422:
      return new HttpError(Code.InvalidArgument, err.message);
    case 401:
      return new HttpError(Code.Unauthenticated, `the token was not accepted by the Kubernetes API server: ${err.message}`);
    case 403:
      return new HttpError(Code.PermissionDenied, err.message);
    case 404:
      return new HttpError(Code.NotFound, err.message);
    case 409:
      return new HttpError(Code.AlreadyExists, err.message);
    case 413:
      return new HttpError(Code.ResourceExhausted, err.message);
    case 429:
    case 503:
      return new HttpError(Code.Unavailable, err.message, { 'retry-after': '1' });
    case 504:
      return new HttpError(Code.DeadlineExceeded, err.message);
    default:
      return new HttpError(Code.Internal, `Kubernetes API server replied ${err.code}: ${err.message}`);
  }
}

/** The reply to an error nobody expected: its details go to the server log, not to the caller. */
export const INTERNAL_MESSAGE = 'internal error: the server could not handle this request (the server log has the details)';

const REFUSAL_CODE: Record<OperationRefused['reason'], Code> = {
  precondition: Code.FailedPrecondition,
  invalid: Code.InvalidArgument,
  'not-found': Code.NotFound,
  unavailable: Code.Unavailable,
  forbidden: Code.PermissionDenied,
  exists: Code.AlreadyExists,
};

/**
 * Any thrown value as an HttpError. Unknown errors become 500 with a generic message: the
 * caller learns nothing of the server's insides, and the error handler logs the original.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ApiError) return fromKube(err);
  if (err instanceof OperationRefused) return new HttpError(REFUSAL_CODE[err.reason], err.message);
  const e = err as { statusCode?: unknown; message?: unknown } | null | undefined;
  const message = typeof e?.message === 'string' ? e.message : '';
  // fastify's own errors (body parsing, size limit, bad content type) carry a statusCode.
  if (typeof e?.statusCode === 'number') {
    if (e.statusCode === 413) return new HttpError(Code.ResourceExhausted, `request body too large: ${message}`.trim());
    if (e.statusCode >= 400 && e.statusCode < 500) return new HttpError(Code.InvalidArgument, message || 'bad request');
    if (e.statusCode === 503) return new HttpError(Code.Unavailable, message || 'unavailable');
  }
  return new HttpError(Code.Internal, INTERNAL_MESSAGE);
}

/** What to log of an error: its message and, for unexpected ones, its stack. */
export function errorDetails(err: unknown): { error: string; stack?: string } {
  if (err instanceof Error)
    return err instanceof HttpError || err instanceof ApiError || err instanceof OperationRefused
      ? { error: err.message }
      : { error: err.message, stack: err.stack };
  try {
    return { error: String(err) };
  } catch {
    return { error: Object.prototype.toString.call(err) };
  }
}

/**
 * An API server message with every double-quoted value replaced by its size. Used where the
 * message goes to logs and Warning Events on behalf of an event (issue 10 item 9): the API
 * server quotes the values it refuses (`metadata.labels: Invalid value: "ghp_…": …`), and those
 * can come from the event's payload. Field paths and explanations are not quoted, so they stay.
 */
export function withholdQuotedValues(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/g, (quoted) => `<string of ${Buffer.byteLength(quoted.slice(1, -1))} bytes>`);
}
