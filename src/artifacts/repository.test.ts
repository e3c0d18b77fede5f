import { describe, expect, it } from 'vitest';
import { ANNOTATION_DEFAULT_REPOSITORY, DEFAULT_KEY_FORMAT, namespacedKeyFormat, repositoryFrom, RepositoryError } from './repository.js';

const cm = (data: Record<string, string>, annotations?: Record<string, string>) => ({
  metadata: { name: 'artifact-repositories', namespace: 'team', ...(annotations ? { annotations } : {}) },
  data,
});
const minio = 'vendorAObject:\n  bucket: b\n  endpoint: minio:9000\n  insecure: true\n  accessKeySecret: {name: s, key: a}\n';

describe('artifact repositories', () => {
  it('picks the named key, else the default annotation, else the only key', () => {
    expect(repositoryFrom(cm({ one: minio }), undefined)).toMatchObject({
      vendorAObject: { bucket: 'b', endpoint: 'minio:9000' },
      source: 'team/artifact-repositories#one',
    });
    const two = cm({ a: minio, b: minio.replace('bucket: b', 'bucket: other') }, { [ANNOTATION_DEFAULT_REPOSITORY]: 'b' });
    expect(repositoryFrom(two, undefined).vendorAObject?.bucket).toBe('other');
    expect(repositoryFrom(two, 'a').vendorAObject?.bucket).toBe('b');
  });

  it("accepts the peer's s3 spelling and keyPrefix", () => {
    const repo = repositoryFrom(cm({ r: 's3:\n  bucket: b\n  endpoint: e:1\n  keyPrefix: logs\n' }), undefined);
    expect(repo.vendorAObject).toEqual({
      bucket: 'b',
      endpoint: 'e:1',
      keyFormat: 'logs/{{workflow.namespace}}/{{workflow.name}}/{{pod.name}}',
    });
  });

  it("takes a blob store (vendorB, or the peer's azure spelling) with its blob name format", () => {
    const text =
      'azure:\n  endpoint: https://acct.blob.core.windows.net\n  container: c\n  blobNameFormat: "x/{{workflow.name}}"\n  accountKeySecret: {name: s, key: k}\n';
    expect(repositoryFrom(cm({ r: text }), undefined).vendorB).toEqual({
      endpoint: 'https://acct.blob.core.windows.net',
      container: 'c',
      blobNameFormat: 'x/{{workflow.name}}',
      accountKeySecret: { name: 's', key: 'k' },
    });
    expect(() => repositoryFrom(cm({ r: 'vendorB:\n  endpoint: e\n' }), undefined)).toThrow(/vendorB.container is required/);
    expect(() => repositoryFrom(cm({ r: 'vendorB:\n  endpoint: e\n  container: c\n  useSDKCreds: true\n' }), undefined)).toThrow(
      /vendorB.useSDKCreds is not supported/,
    );
    expect(() => repositoryFrom(cm({ r: `${minio}vendorB:\n  endpoint: e\n  container: c\n` }), undefined)).toThrow(
      /names more than one store/,
    );
  });

  it("takes GCS (vendorCObject, or the peer's gcs spelling) with its key format", () => {
    const text = 'gcs:\n  bucket: b\n  keyPrefix: logs\n  serviceAccountKeySecret: {name: s, key: k}\n';
    expect(repositoryFrom(cm({ r: text }), undefined).vendorCObject).toEqual({
      bucket: 'b',
      keyFormat: 'logs/{{workflow.namespace}}/{{workflow.name}}/{{pod.name}}',
      serviceAccountKeySecret: { name: 's', key: 'k' },
    });
    expect(() => repositoryFrom(cm({ r: 'gcs:\n  serviceAccountKeySecret: {name: s, key: k}\n' }), undefined)).toThrow(
      /vendorCObject.bucket is required/,
    );
    expect(() => repositoryFrom(cm({ r: 'gcs:\n  bucket: b\n  endpoint: x\n' }), undefined)).toThrow(
      /vendorCObject.endpoint is not supported/,
    );
  });

  it('names the ConfigMap, key and field of what is wrong', () => {
    expect(() => repositoryFrom(cm({ a: minio, b: minio }), undefined)).toThrow(
      /ConfigMap team\/artifact-repositories holds 2 repositories and names no default/,
    );
    expect(() => repositoryFrom(cm({ a: minio }), 'zzz')).toThrow('ConfigMap team/artifact-repositories has no key "zzz"');
    expect(() => repositoryFrom(cm({ a: 'oss:\n  bucket: b\n' }), undefined)).toThrow(/key "a": field "oss" is not supported/);
    expect(() => repositoryFrom(cm({ a: 'vendorAObject:\n  endpoint: e\n' }), undefined)).toThrow(/vendorAObject.bucket is required/);
    expect(() =>
      repositoryFrom(cm({ a: 'vendorAObject:\n  bucket: b\n  endpoint: e\n  accessKeySecret: plain-text-key\n' }), undefined),
    ).toThrow(RepositoryError);
  });
});

describe('keys in a repository shared by namespaces', () => {
  it('keeps each namespace under its own prefix, whatever the shared repository’s key format says', () => {
    const shared = { source: 'plugflow/artifact-repositories#default' };
    expect(namespacedKeyFormat('{{workflow.name}}/{{pod.name}}', shared, 'team-a')).toBe(
      '{{workflow.namespace}}/{{workflow.name}}/{{pod.name}}',
    );
    expect(namespacedKeyFormat('x/{{ workflow.namespace }}/{{pod.name}}', shared, 'team-a')).toBe(
      'x/{{ workflow.namespace }}/{{pod.name}}',
    );
    // The namespace's own repository keeps its format as written.
    expect(namespacedKeyFormat('{{workflow.name}}/{{pod.name}}', { source: 'team-a/artifact-repositories#r' }, 'team-a')).toBe(
      '{{workflow.name}}/{{pod.name}}',
    );
    expect(DEFAULT_KEY_FORMAT).toBe('{{workflow.namespace}}/{{workflow.name}}/{{pod.name}}');
  });
});
