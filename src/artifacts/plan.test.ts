import { describe, expect, it } from 'vitest';
import type { Template } from '../api/index.js';
import { keyVariables, planArtifacts, type BlobLocation, type GcsLocation, type StoreLocation } from './plan.js';
import type { ArtifactRepository } from './repository.js';

const repo: ArtifactRepository = {
  source: 'ns/artifact-repositories#minio',
  vendorAObject: {
    bucket: 'b',
    endpoint: 'minio:9000',
    insecure: true,
    accessKeySecret: { name: 'creds', key: 'access' },
    secretKeySecret: { name: 'creds', key: 'secret' },
  },
};
const vars = keyVariables({ name: 'wf', namespace: 'ns', uid: 'u', creationTimestamp: '2026-03-04T05:06:07Z' }, 'wf-gen-123');

describe('the artifact plan of a step pod', () => {
  it("gives a git input over SSH its key as a variable and the installation's known hosts, unless it ignores host keys", () => {
    const git = (extra: Record<string, unknown>) => ({
      repo: 'git@example.com:team/app.git',
      sshPrivateKeySecret: { name: 'ssh', key: 'id' },
      ...extra,
    });
    const t: Template = {
      name: 'clone',
      inputs: {
        artifacts: [
          { name: 'a', path: '/a', git: git({}) },
          { name: 'b', path: '/b', git: git({ insecureIgnoreHostKey: true }) },
        ],
      },
    };
    const plan = planArtifacts(t, undefined, vars, { gitKnownHosts: 'example.com ssh-ed25519 AAAA' });
    expect(plan.inputs.map((i) => i.source)).toEqual([
      { git: { repo: 'git@example.com:team/app.git', sshPrivateKeyEnv: 'PLUGFLOW_SECRET_0', knownHosts: 'example.com ssh-ed25519 AAAA' } },
      { git: { repo: 'git@example.com:team/app.git', sshPrivateKeyEnv: 'PLUGFLOW_SECRET_0', insecureIgnoreHostKey: true } },
    ]);
  });

  it("stores outputs in a GCS repository at the installation's endpoint, the key file as a variable", () => {
    const gcsRepo: ArtifactRepository = {
      source: 'ns/artifact-repositories#gcs',
      vendorCObject: { bucket: 'g', serviceAccountKeySecret: { name: 'sa', key: 'json' } },
    };
    const t: Template = { name: 'gen', outputs: { artifacts: [{ name: 'o', path: '/o' }] } };
    const plan = planArtifacts(t, gcsRepo, vars, { gcsEndpoint: 'http://fake:4443' });
    const store: GcsLocation = {
      kind: 'gcs',
      bucket: 'g',
      key: 'ns/wf/wf-gen-123/o.tgz',
      endpoint: 'http://fake:4443',
      serviceAccountKeyEnv: 'PLUGFLOW_SECRET_0',
    };
    expect(plan.outputs[0]!.store).toEqual(store);
    expect(plan.outputs[0]!.record.vendorCObject).toEqual({
      bucket: 'g',
      key: 'ns/wf/wf-gen-123/o.tgz',
      serviceAccountKeySecret: { name: 'sa', key: 'json' },
    });
  });

  it('stores outputs in a blob-store repository, and reads a key-only vendorB input from it', () => {
    const blobRepo: ArtifactRepository = {
      source: 'ns/artifact-repositories#azure',
      vendorB: { endpoint: 'http://127.0.0.1:10000/dev', container: 'c', accountKeySecret: { name: 'az', key: 'key' } },
    };
    const t: Template = {
      name: 'gen',
      inputs: { artifacts: [{ name: 'in', path: '/in', vendorB: { blob: 'some/blob.tgz' } }] },
      outputs: {
        artifacts: [
          { name: 'tree', path: '/out' },
          { name: 's3', path: '/s3', vendorAObject: { bucket: 'b', endpoint: 'e', key: 'k' } },
        ],
      },
    };
    const plan = planArtifacts(t, blobRepo, vars);
    const blob: BlobLocation = {
      kind: 'blob',
      endpoint: 'http://127.0.0.1:10000/dev',
      container: 'c',
      blob: 'ns/wf/wf-gen-123/tree.tgz',
      accountKeyEnv: 'PLUGFLOW_SECRET_0',
    };
    expect(plan.inputs[0]!.source).toEqual({ store: { ...blob, blob: 'some/blob.tgz' } });
    expect(plan.outputs[0]!.store).toEqual(blob);
    expect(plan.outputs[0]!.record).toEqual({
      name: 'tree',
      path: '/out',
      vendorB: {
        endpoint: 'http://127.0.0.1:10000/dev',
        container: 'c',
        blob: 'ns/wf/wf-gen-123/tree.tgz',
        accountKeySecret: { name: 'az', key: 'key' },
      },
    });
    // An artifact naming its own object store is stored there, whatever the repository is.
    expect(plan.outputs[1]!.store).toEqual({ bucket: 'b', endpoint: 'e', key: 'k' });
    expect(plan.secrets).toEqual([{ env: 'PLUGFLOW_SECRET_0', ref: { name: 'az', key: 'key' } }]);
  });

  it("stores outputs under the repository's default key format, credentials as variables of the init/wait side", () => {
    const t: Template = {
      name: 'gen',
      container: { image: 'a', command: ['x'] },
      outputs: {
        artifacts: [
          { name: 'tree', path: '/out' },
          { name: 'bin', path: '/bin/app', archive: { none: {} }, optional: true },
        ],
      },
    };
    const plan = planArtifacts(t, repo, vars);
    expect(plan.packs).toEqual([
      { name: 'tree', path: '/out', archive: 'tar' },
      { name: 'bin', path: '/bin/app', archive: 'none' },
    ]);
    expect(plan.outputs[0]!.store).toEqual({
      bucket: 'b',
      key: 'ns/wf/wf-gen-123/tree.tgz',
      endpoint: 'minio:9000',
      insecure: true,
      accessKeyEnv: 'PLUGFLOW_SECRET_0',
      secretKeyEnv: 'PLUGFLOW_SECRET_1',
    });
    expect(plan.outputs[1]).toMatchObject({ optional: true, store: { key: 'ns/wf/wf-gen-123/bin' }, record: { archive: { none: {} } } });
    // The record keeps Secret references (never values) for later steps.
    expect(plan.outputs[0]!.record.vendorAObject).toMatchObject({ accessKeySecret: { name: 'creds', key: 'access' } });
    expect(plan.secrets).toEqual([
      { env: 'PLUGFLOW_SECRET_0', ref: { name: 'creds', key: 'access' } },
      { env: 'PLUGFLOW_SECRET_1', ref: { name: 'creds', key: 'secret' } },
    ]);
  });

  it("formats keys with the workflow's creation time, and lets an artifact name its own key", () => {
    const t: Template = {
      name: 't',
      archiveLocation: { vendorAObject: { key: '{{workflow.creationTimestamp.Y}}/{{workflow.creationTimestamp.m}}/{{workflow.name}}' } },
      outputs: {
        artifacts: [
          { name: 'a', path: '/a' },
          { name: 'own', path: '/o', vendorAObject: { key: 'fixed/key.tgz' } },
        ],
      },
    };
    const plan = planArtifacts(t, repo, vars);
    expect(plan.outputs.map((o) => (o.store as StoreLocation).key)).toEqual(['2026/03/wf/a.tgz', 'fixed/key.tgz']);
  });

  it('says where to configure a repository when there is none', () => {
    const t: Template = { name: 't', outputs: { artifacts: [{ name: 'a', path: '/a' }] } };
    expect(() => planArtifacts(t, undefined, vars)).toThrow(
      /outputs.artifacts\[a\]: no artifact repository to store it in: create the ConfigMap artifact-repositories/,
    );
  });

  it('plans inputs from the bound locations; steps outputs (from) are not packed by a pod', () => {
    const t: Template = {
      name: 't',
      inputs: {
        artifacts: [
          { name: 'r', path: '/r', raw: { data: 'x' } },
          { name: 's', path: '/s', mode: 0o755, recurseMode: true, vendorAObject: { ...repo.vendorAObject, key: 'k' } },
          { name: 'h', path: '/h', http: { url: 'https://e/x', auth: { basicAuth: { usernameSecret: { name: 'u', key: 'n' } } } } },
        ],
      },
      outputs: { artifacts: [{ name: 'agg', from: '{{steps.a.outputs.artifacts.x}}' }] },
    };
    const plan = planArtifacts(t, undefined, vars);
    expect(plan.inputs).toEqual([
      { name: 'r', path: '/r', source: { raw: 'x' } },
      {
        name: 's',
        path: '/s',
        mode: 0o755,
        recurseMode: true,
        source: {
          store: {
            bucket: 'b',
            key: 'k',
            endpoint: 'minio:9000',
            insecure: true,
            accessKeyEnv: 'PLUGFLOW_SECRET_0',
            secretKeyEnv: 'PLUGFLOW_SECRET_1',
          },
        },
      },
      { name: 'h', path: '/h', source: { http: { url: 'https://e/x', usernameEnv: 'PLUGFLOW_SECRET_2' } } },
    ]);
    expect(plan.packs).toEqual([]);
    expect(() => planArtifacts({ name: 't', inputs: { artifacts: [{ name: 'x', raw: { data: '' } }] } }, undefined, vars)).toThrow(
      'template "t": inputs.artifacts[x].path is required',
    );
  });
});
