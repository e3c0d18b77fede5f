import { describe, expect, it } from 'vitest';
import { HttpError, Code, errorDetails, fromKube, INTERNAL_MESSAGE, toHttpError, unavailable, withholdQuotedValues } from './errors.js';
import { ApiError } from '../kube/errors.js';

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
    for (const [code, status] of pairs) expect(new HttpError(code, 'x').status).toBe(status);
    expect(new HttpError(Code.NotFound, 'gone').body()).toEqual({ code: 5, message: 'gone' });
  });

  it('carry Retry-After when the queue is full', () => {
    expect(unavailable('full', 1).headers).toEqual({ 'retry-after': '1' });
  });

  it("turn the API server's answers into ours, keeping its message", () => {
    expect(fromKube(new ApiError(403, 'Forbidden', 'workflows is forbidden', 'POST /x')).body()).toEqual({
      code: 7,
      message: 'workflows is forbidden',
    });
    expect(fromKube(new ApiError(409, 'AlreadyExists', 'exists', 'POST /x')).code).toBe(Code.AlreadyExists);
    expect(fromKube(new ApiError(422, 'Invalid', 'bad name', 'POST /x')).code).toBe(Code.InvalidArgument);
    expect(fromKube(new ApiError(401, 'Unauthorized', 'Unauthorized', 'POST /x')).code).toBe(Code.Unauthenticated);
    expect(fromKube(new ApiError(429, 'TooManyRequests', 'slow down', 'POST /x')).headers).toEqual({ 'retry-after': '1' });
    expect(fromKube(new ApiError(502, '', 'bad gateway', 'POST /x')).message).toMatch(/^Kubernetes API server replied 502/);
  });

  it("map fastify's own errors (size limit, bad JSON) and unknown errors", () => {
    expect(toHttpError(Object.assign(new Error('too big'), { statusCode: 413 })).code).toBe(Code.ResourceExhausted);
    expect(toHttpError(Object.assign(new Error('Unexpected end of JSON input'), { statusCode: 400 })).code).toBe(Code.InvalidArgument);
  });

  it('answer unknown errors with a generic 500, whose details are for the log', () => {
    for (const thrown of [
      new TypeError("Cannot read properties of null (reading 'steps')"),
      new Error('boom'),
      'a string',
      null,
      undefined,
      { toString: [] },
    ]) {
      expect(toHttpError(thrown).body()).toEqual({ code: 13, message: INTERNAL_MESSAGE });
    }
    expect(errorDetails(new TypeError('x is not iterable'))).toMatchObject({
      error: 'x is not iterable',
      stack: expect.stringContaining('TypeError'),
    });
    expect(errorDetails(new HttpError(Code.NotFound, 'gone'))).toEqual({ error: 'gone' });
    expect(errorDetails({ toString: [] })).toEqual({ error: '[object Object]' });
    // Node's own programming errors (ERR_…) are not network failures.
    expect(toHttpError(Object.assign(new TypeError('bad arg'), { code: 'ERR_INVALID_ARG_TYPE' })).code).toBe(Code.Internal);
  });

  it('answer 503 when the API server cannot be reached (a transport failure, code 0)', () => {
    const e = toHttpError(new ApiError(0, '', 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.1:6443', 'POST /apis/x'));
    expect(e.status).toBe(503);
    expect(e.headers).toEqual({ 'retry-after': '1' });
    expect(e.message).toBe('the Kubernetes API server could not be reached: ECONNREFUSED: connect ECONNREFUSED 10.0.0.1:6443');
    // A raw system error is no API server answer: only the client's ApiError says "unreachable".
    expect(toHttpError(Object.assign(new Error('ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' })).code).toBe(Code.Internal);
  });
});

describe('API server messages about an event', () => {
  it('show refused values by size only, keeping fields and explanations', () => {
    const msg =
      'Workflow.plugflow.io "build-ghp_abc" is invalid: metadata.labels: Invalid value: "ghp_1234567890abcdef\\"x": a valid label must be an empty string or consist of alphanumeric characters';
    const out = withholdQuotedValues(msg);
    expect(out).not.toContain('ghp_');
    expect(out).toBe(
      'Workflow.plugflow.io <string of 13 bytes> is invalid: metadata.labels: Invalid value: <string of 23 bytes>: a valid label must be an empty string or consist of alphanumeric characters',
    );
  });
});
