import { describe, expect, it } from 'vitest';
import { checkTrusted } from './artifact-trust.js';
import { OperationRefused } from './errors.js';

describe('which artifacts the server downloads', () => {
  const origins = new Set(['http://minio:9000', 'http://127.0.0.1:8080']);

  it('refuses an http output even when its URL is at a trusted origin: it is not in an object store', () => {
    const a = { name: 'out', http: { url: 'http://127.0.0.1:8080/webhdfs/v1/f?op=CREATE' } };
    let err: unknown;
    try {
      checkTrusted(a, origins, 'workflow ns/wf');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OperationRefused);
    expect((err as OperationRefused).message).toBe(
      'artifact "out" of workflow ns/wf is not in an object store (it was uploaded to its http url): the server downloads only from the stores of artifact repositories; fetch it from where it is',
    );
  });

  it('refuses an artifact an artifact driver keeps (the server runs no driver)', () => {
    expect(() => checkTrusted({ name: 'p', plugin: { name: 'dirstore', key: 'k' } }, origins, 'workflow ns/wf')).toThrow(
      'artifact "p" of workflow ns/wf is not in an object store (artifact driver "dirstore" keeps it): the server downloads only from the stores of artifact repositories; fetch it from where it is',
    );
  });

  it('still serves an object of a trusted store', () => {
    expect(() =>
      checkTrusted({ name: 'o', vendorAObject: { bucket: 'b', key: 'k', endpoint: 'minio:9000', insecure: true } }, origins, 'w'),
    ).not.toThrow();
  });
});
