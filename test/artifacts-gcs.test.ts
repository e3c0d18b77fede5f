/**
 * Artifacts in GCS (`vendorCObject`), against a real fake-gcs-server: a repository ConfigMap with
 * gcs, passing a file and a directory stored as-is between steps, an input naming its own object,
 * OnWorkflowDeletion GC holding the workflow until its objects are gone, a malformed key and a
 * missing bucket named on the node, and `plugflow cp`. The endpoint comes from
 * PLUGFLOW_GCS_ENDPOINT (the spec's GCS record has none); requests to it are unsigned, so the
 * service-account key is checked for shape here, not exchanged for a token (that needs Google).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { ENV_GCS_ENDPOINT } from '../src/artifacts/settings.js';
import { uploadStored } from '../src/artifacts/store.js';
import { runCopy } from '../src/cli/cp.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { startGcsStore, type GcsStore } from '../src/devenv/gcs-store.js';
import type { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { CONFIGMAPS, SECRETS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { passing, sh } from './support/artifact-workflows.js';
import { adminKubeConfig, cluster } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
let gcs: GcsStore;
const BUCKET = 'artifacts';
const { log } = captureLogger();
const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'test',
  client_email: 'artifacts@test.iam.gserviceaccount.com',
  private_key: privateKey,
});

const node = (wf: Workflow, displayName: string) => Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === displayName);
const exists = async (key: string) => (await fetch(`${gcs.endpoint}/storage/v1/b/${BUCKET}/o/${encodeURIComponent(key)}`)).status === 200;

beforeAll(async () => {
  gcs = await startGcsStore({ log: (l) => log.info(l) });
  const made = await fetch(`${gcs.endpoint}/storage/v1/b`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: BUCKET }),
  });
  expect(made.ok).toBe(true);
  // plugflow cp runs in this process and reads it like the server would.
  process.env[ENV_GCS_ENDPOINT] = gcs.endpoint;
  bed = await startRunnerBed('artifacts-gcs');
  ({ ns, client } = bed);
  await client.create(SECRETS, ns, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'gcs-creds' },
    stringData: { key: KEY, broken: '{"not": "a key"' },
  });
  await client.create(CONFIGMAPS, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'artifact-repositories' },
    data: {
      gcs: `gcs:\n  bucket: ${BUCKET}\n  keyFormat: "runs/{{workflow.name}}/{{pod.name}}"\n  serviceAccountKeySecret: {name: gcs-creds, key: key}\n`,
    },
  });
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: ns,
    metricsPort: 0,
    workers: 2,
    log,
    gcsEndpoint: gcs.endpoint,
  });
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
  await gcs?.stop();
  delete process.env[ENV_GCS_ENDPOINT];
});

describe('artifacts in GCS (vendorCObject, fake-gcs-server)', () => {
  it('passes a file and a directory stored as-is through the repository; reads an input naming its own object; plugflow cp gets them; deletion collects them', async () => {
    const seed = join(mkdtempSync(join(tmpdir(), 'plugflow-gcs-')), 'seed');
    writeFileSync(seed, 'seeded\n');
    await uploadStored({ kind: 'gcs', endpoint: gcs.endpoint, bucket: BUCKET, key: 'seed/data.txt' }, { serviceAccountKey: KEY }, seed);
    await client.create(
      WORKFLOWS,
      ns,
      passing(
        'gcs-pass',
        ['msg', 'tree'],
        sh('gen', 'echo hello > /tmp/msg; mkdir -p /tmp/t/sub && echo B > /tmp/t/sub/b', {
          outputs: {
            artifacts: [
              { name: 'msg', path: '/tmp/msg' },
              { name: 'tree', path: '/tmp/t', archive: { none: {} } },
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
                vendorCObject: { bucket: BUCKET, key: 'seed/data.txt', serviceAccountKeySecret: { name: 'gcs-creds', key: 'key' } },
              },
            ],
          },
        }),
        { artifactGC: { strategy: 'OnWorkflowDeletion' } },
      ),
    );
    const wf = await waitForCompletion(client, ns, 'gcs-pass', 120_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(node(wf, 'use')?.outputs?.result).toBe('hello\nB\nseeded');
    const msg = node(wf, 'gen')!.outputs!.artifacts!.find((a) => a.name === 'msg')!;
    expect(msg.vendorCObject).toEqual({
      bucket: BUCKET,
      key: expect.stringMatching(/^runs\/gcs-pass\/gcs-pass-gen-\d+\/msg\.tgz$/),
      serviceAccountKeySecret: { name: 'gcs-creds', key: 'key' },
    });
    expect(JSON.stringify(wf)).not.toContain('PRIVATE KEY');

    const out = mkdtempSync(join(tmpdir(), 'plugflow-cp-gcs-'));
    const lines: string[] = [];
    const code = await runCopy(
      'gcs-pass',
      out,
      { namespace: ns, kubeconfig: cluster().kubeconfigPath, node: 'gen' },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(readFileSync(join(out, 'gen', 'msg'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(out, 'gen', 'tree', 'sub', 'b'), 'utf8')).toBe('B\n');

    const tree = node(wf, 'gen')!.outputs!.artifacts!.find((a) => a.name === 'tree')!;
    expect(await exists(msg.vendorCObject!.key!)).toBe(true);
    expect(await exists(`${tree.vendorCObject!.key}/sub/b`)).toBe(true);
    await client.delete(WORKFLOWS, ns, 'gcs-pass');
    await eventually(
      async () =>
        client.get(WORKFLOWS, ns, 'gcs-pass').then(
          () => undefined,
          (err: unknown) => isNotFound(err),
        ),
      'gcs-pass deleted',
      90_000,
    );
    expect(await exists(msg.vendorCObject!.key!)).toBe(false);
    expect(await exists(`${tree.vendorCObject!.key}/sub/b`)).toBe(false);
    expect(await exists('seed/data.txt')).toBe(true); // an input is not the workflow's to delete
  }, 240_000);

  it('a malformed key and a missing bucket fail the step naming the artifact and the location', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('gcs-bad', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'badkey', template: 'badkey' },
                { name: 'nobucket', template: 'nobucket' },
              ],
            ],
          },
          sh('badkey', 'echo ran', {
            inputs: {
              artifacts: [
                {
                  name: 'in',
                  path: '/in',
                  vendorCObject: { bucket: BUCKET, key: 'seed/data.txt', serviceAccountKeySecret: { name: 'gcs-creds', key: 'broken' } },
                },
              ],
            },
          }),
          sh('nobucket', 'echo ran', {
            outputs: {
              artifacts: [
                {
                  name: 'o',
                  path: '/etc/hostname',
                  vendorCObject: { bucket: 'missing-bucket', key: 'x', serviceAccountKeySecret: { name: 'gcs-creds', key: 'key' } },
                },
              ],
            },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'gcs-bad', 120_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(node(wf, 'badkey')?.message).toContain(
      `input artifact "in": the service account key of gs://${BUCKET}/seed/data.txt at ${gcs.endpoint} is not JSON`,
    );
    expect(node(wf, 'badkey')?.outputs?.result).toBeUndefined();
    expect(node(wf, 'nobucket')?.message).toContain(
      `output artifact "o": uploading to gs://missing-bucket/x at ${gcs.endpoint}: the bucket does not exist`,
    );
  }, 180_000);
});
