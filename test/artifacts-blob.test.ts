/**
 * Artifacts in an Azure-compatible blob store (`vendorB`), against a real Azurite: a repository
 * ConfigMap with vendorB, passing a file and a directory stored as-is between steps, an input
 * artifact that names its own blob, wrong credentials named on the node, artifact GC, and
 * `plugflow cp` reading the blobs with the caller's rights.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { uploadStored } from '../src/artifacts/store.js';
import { runCopy } from '../src/cli/cp.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { startBlobStore, type BlobStore } from '../src/devenv/blob-store.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, SECRETS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { passing, sh } from './support/artifact-workflows.js';
import { adminKubeConfig, cluster } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
let blobs: BlobStore;
const CONTAINER = 'artifacts';
const { log } = captureLogger();

const node = (wf: Workflow, displayName: string) => Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === displayName);
const container = () =>
  new BlobServiceClient(blobs.endpoint, new StorageSharedKeyCredential(blobs.account, blobs.accountKey)).getContainerClient(CONTAINER);
const exists = (blob: string) => container().getBlobClient(blob).exists();

beforeAll(async () => {
  blobs = await startBlobStore({ log: (l) => log.info(l) });
  await container().create();
  bed = await startRunnerBed('artifacts-blob');
  ({ ns, client } = bed);
  await client.create(SECRETS, ns, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'blob-creds' },
    stringData: { key: blobs.accountKey, wrong: Buffer.from('not the key').toString('base64') },
  });
  await client.create(CONFIGMAPS, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'artifact-repositories' },
    data: {
      azure: `azure:\n  endpoint: ${blobs.endpoint}\n  container: ${CONTAINER}\n  blobNameFormat: "runs/{{workflow.name}}/{{pod.name}}"\n  accountKeySecret: {name: blob-creds, key: key}\n`,
    },
  });
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
  await blobs?.stop();
});

describe('artifacts in a blob store (vendorB, Azurite)', () => {
  it('passes a file and a directory stored as-is through the repository; reads an input naming its own blob; collects on completion; plugflow cp gets them', async () => {
    const seed = join(mkdtempSync(join(tmpdir(), 'plugflow-blob-')), 'seed');
    writeFileSync(seed, 'seeded\n');
    await uploadStored(
      { kind: 'blob', endpoint: blobs.endpoint, container: CONTAINER, blob: 'seed/data.txt' },
      { accountKey: blobs.accountKey },
      seed,
    );
    await client.create(
      WORKFLOWS,
      ns,
      passing(
        'blob-pass',
        ['msg', 'tree'],
        sh('gen', 'echo hello > /tmp/msg; mkdir -p /tmp/t/sub && echo B > /tmp/t/sub/b', {
          outputs: {
            artifacts: [
              { name: 'msg', path: '/tmp/msg' },
              { name: 'tree', path: '/tmp/t', archive: { none: {} } },
              { name: 'scratch', path: '/tmp/msg', artifactGC: { strategy: 'OnWorkflowCompletion' } },
            ],
          },
        }),
        sh('use', 'cat /in/msg /in/tree/sub/b /in/seed', {
          inputs: {
            artifacts: [
              { name: 'msg', path: '/in/msg' },
              { name: 'tree', path: '/in/tree' },
              {
                name: 'seed',
                path: '/in/seed',
                vendorB: {
                  endpoint: blobs.endpoint,
                  container: CONTAINER,
                  blob: 'seed/data.txt',
                  accountKeySecret: { name: 'blob-creds', key: 'key' },
                },
              },
            ],
          },
        }),
      ),
    );
    const wf = await waitForCompletion(client, ns, 'blob-pass', 120_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(node(wf, 'use')?.outputs?.result).toBe('hello\nB\nseeded');
    const gen = node(wf, 'gen')!;
    const msg = gen.outputs!.artifacts!.find((a) => a.name === 'msg')!;
    expect(msg.vendorB).toEqual({
      endpoint: blobs.endpoint,
      container: CONTAINER,
      blob: expect.stringMatching(/^runs\/blob-pass\/blob-pass-gen-\d+\/msg\.tgz$/),
      accountKeySecret: { name: 'blob-creds', key: 'key' },
    });
    expect(await exists(msg.vendorB!.blob!)).toBe(true);
    const tree = gen.outputs!.artifacts!.find((a) => a.name === 'tree')!;
    expect(await exists(`${tree.vendorB!.blob}/sub/b`)).toBe(true);
    // artifactGC on the one artifact: it goes once the workflow finished, the others stay.
    const scratch = gen.outputs!.artifacts!.find((a) => a.name === 'scratch')!;
    await eventually(async () => {
      const now = await client.get<Workflow & { status: { artifactGCStatus?: { strategiesProcessed?: Record<string, boolean> } } }>(
        WORKFLOWS,
        ns,
        'blob-pass',
      );
      return now.status.artifactGCStatus?.strategiesProcessed?.OnWorkflowCompletion;
    }, 'OnWorkflowCompletion processed');
    expect(await exists(scratch.vendorB!.blob!)).toBe(false);
    expect(await exists(msg.vendorB!.blob!)).toBe(true);

    const out = mkdtempSync(join(tmpdir(), 'plugflow-cp-blob-'));
    const lines: string[] = [];
    const code = await runCopy(
      'blob-pass',
      out,
      { namespace: ns, kubeconfig: cluster().kubeconfigPath, node: 'gen' },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(readFileSync(join(out, 'gen', 'msg'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(out, 'gen', 'tree', 'sub', 'b'), 'utf8')).toBe('B\n');
    expect(lines).toContain('gen/scratch: skipped, deleted by artifactGC (OnWorkflowCompletion)');
    expect(readdirSync(join(out, 'gen')).sort()).toEqual(['msg', 'tree']); // nothing half-done left behind
  }, 180_000);

  it('a wrong account key fails the step naming the artifact and the blob; a missing container is named too', async () => {
    const loc = { endpoint: blobs.endpoint, container: CONTAINER, blob: 'seed/data.txt' };
    await client.create(
      WORKFLOWS,
      ns,
      workflow('blob-bad', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'wrongkey', template: 'wrongkey' },
                { name: 'nocontainer', template: 'nocontainer' },
              ],
            ],
          },
          sh('wrongkey', 'echo ran', {
            inputs: {
              artifacts: [{ name: 'in', path: '/in', vendorB: { ...loc, accountKeySecret: { name: 'blob-creds', key: 'wrong' } } }],
            },
          }),
          sh('nocontainer', 'echo ran', {
            outputs: { artifacts: [{ name: 'o', path: '/etc/hostname', vendorB: { ...loc, container: 'missing', blob: 'x' } }] },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'blob-bad', 120_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(node(wf, 'wrongkey')?.message).toContain(
      `input artifact "in": downloading blob://${CONTAINER}/seed/data.txt at ${blobs.endpoint}: access denied`,
    );
    expect(node(wf, 'wrongkey')?.outputs?.result).toBeUndefined();
    expect(node(wf, 'nocontainer')?.message).toContain(
      `output artifact "o": uploading to blob://missing/x at ${blobs.endpoint}: the container does not exist`,
    );
  }, 180_000);
});
