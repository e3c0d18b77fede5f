import { describe, expect, it } from 'vitest';
import { ApiError, Code, fromKube, toApiError, unavailable } from './errors.js';
import { KubeApiError } from './kube-rest.js';

describe('error replies', () => {
  it('pair each gRPC code with its HTTP status', () => {
    const pairs: [Code, number][] = [
      [Code.InvalidArgument, 400],
      [Code.Unauthenticated, 401],
      [Code.PermissionDenied, 403],
      [Code.NotFound, 404],
      [Code.AlreadyExists, 409],
      [Code.ResourceExhausted, 413],
      [Code.Internal, 500],
      [Code.Unavailable, 503],
    ];
    for (const [code, status] of pairs) expect(new ApiError(code, 'x').status).toBe(status);
    expect(new ApiError(Code.NotFound, 'gone').body()).toEqual({ code: 5, message: 'gone' });
  });

  it('carry Retry-After when the queue is full', () => {
    expect(unavailable('full', 1).headers).toEqual({ 'retry-after': '1' });
  });

  it("turn the API server's answers into ours, keeping its message", () => {
    expect(fromKube(new KubeApiError(403, 'Forbidden', 'workflows is forbidden')).body()).toEqual({ code: 7, message: 'workflows is forbidden' });
    expect(fromKube(new KubeApiError(409, 'AlreadyExists', 'exists')).code).toBe(Code.AlreadyExists);
    expect(fromKube(new KubeApiError(422, 'Invalid', 'bad name')).code).toBe(Code.InvalidArgument);
    expect(fromKube(new KubeApiError(401, 'Unauthorized', 'Unauthorized')).code).toBe(Code.Unauthenticated);
    expect(fromKube(new KubeApiError(429, 'TooManyRequests', 'slow down')).headers).toEqual({ 'retry-after': '1' });
    expect(fromKube(new KubeApiError(502, '', 'bad gateway')).message).toMatch(/^Kubernetes API server replied 502/);
  });

  it("map fastify's own errors (size limit, bad JSON) and unknown errors", () => {
    expect(toApiError(Object.assign(new Error('too big'), { statusCode: 413 })).code).toBe(Code.ResourceExhausted);
    expect(toApiError(Object.assign(new Error('Unexpected end of JSON input'), { statusCode: 400 })).code).toBe(Code.InvalidArgument);
    expect(toApiError(new Error('boom')).body()).toEqual({ code: 13, message: 'boom' });
  });
});
