/**
 * Every error the server sends, in one place: the body is `{"code": <gRPC-style code>,
 * "message": "..."}` (the peer's shape, so its clients understand ours) with the HTTP status
 * that goes with the code.
 */
import { KubeApiError } from './kube-rest.js';

/** gRPC status codes used in error bodies. */
export const Code = {
  InvalidArgument: 3,
  DeadlineExceeded: 4,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  ResourceExhausted: 8,
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
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.Unauthenticated]: 401,
};

export interface ErrorBody {
  code: Code;
  message: string;
}

/** An error with its reply: thrown anywhere in a route, sent by the error handler. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: Code,
    message: string,
    /** Extra reply headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = STATUS[code];
  }

  body(): ErrorBody {
    return { code: this.code, message: this.message };
  }
}

export const badRequest = (message: string) => new ApiError(Code.InvalidArgument, message);
export const unauthenticated = (message: string) => new ApiError(Code.Unauthenticated, message);
export const notFound = (message: string) => new ApiError(Code.NotFound, message);
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new ApiError(Code.Unavailable, message, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });

/** The API server's answer, as ours: its status picks the code, its message is kept. */
export function fromKube(err: KubeApiError): ApiError {
  switch (err.status) {
    case 400:
    case 422:
      return new ApiError(Code.InvalidArgument, err.message);
    case 401:
      return new ApiError(Code.Unauthenticated, `the token was not accepted by the Kubernetes API server: ${err.message}`);
    case 403:
      return new ApiError(Code.PermissionDenied, err.message);
    case 404:
      return new ApiError(Code.NotFound, err.message);
    case 409:
      return new ApiError(Code.AlreadyExists, err.message);
    case 413:
      return new ApiError(Code.ResourceExhausted, err.message);
    case 429:
    case 503:
      return new ApiError(Code.Unavailable, err.message, { 'retry-after': '1' });
    case 504:
      return new ApiError(Code.DeadlineExceeded, err.message);
    default:
      return new ApiError(Code.Internal, `Kubernetes API server replied ${err.status}: ${err.message}`);
  }
}

/** Any thrown value as an ApiError (unknown errors become 500 with their message). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof KubeApiError) return fromKube(err);
  const e = err as { statusCode?: number; code?: string; message?: string };
  // fastify's own errors (body parsing, size limit, bad content type) carry a statusCode.
  if (typeof e?.statusCode === 'number') {
    if (e.statusCode === 413) return new ApiError(Code.ResourceExhausted, `request body too large: ${e.message ?? ''}`.trim());
    if (e.statusCode >= 400 && e.statusCode < 500) return new ApiError(Code.InvalidArgument, e.message ?? 'bad request');
    if (e.statusCode === 503) return new ApiError(Code.Unavailable, e.message ?? 'unavailable');
  }
  return new ApiError(Code.Internal, e?.message ?? String(err));
}
