/**
 * Artifacts end to end on real parts: the real API server, the local pod runner as the kubelet
 * (running the real init/emissary/wait programs), a real MinIO started for the suite, and a real
 * HTTP server. Files and directories travel from step to step through the object store; bad
 * input (hostile archives, wrong credentials, missing paths, no repository) fails the node with a
 * message naming the artifact, and nothing lands outside the artifact's path.
 */
import { createServer, type Server } from 'node:http';
import { PutObjectCommand, GetObjectCommand, CreateBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarGz, zipStored } from './support/archives.js';
import { passing, sh } from './support/artifact-workflows.js';
import type { Artifact, Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, PODS, SECRETS, SERVICE_ACCOUNTS, WORKFLOW_TEMPLATES, WORKFLOWS } from '../src/kube/resource.js';
import { isNotFound } from '../src/kube/errors.js';
import { storeClient } from '../src/artifacts/s3.js';
import { downloadStored, listStored } from '../src/artifacts/store.js';
import { startObjectStore, type ObjectStore } from '../src/devenv/object-store.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig, cluster } from './support/cluster.js';
import { call, grantRole, rule, startTestServer, type TestServer } from './support/server.js';
import { runCopy } from '../src/cli/cp.js';
import { ArchiveStore } from '../src/archive/archive-store.js';
import { startPostgres } from '../src/devenv/postgres.js';
import { openSse } from './support/sse.js';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { readYamlDocument } from '../src/yaml/kube-yaml.js';
import { commitFile, gitCmd, makeRepo, startGitServer, type GitServer } from './support/git-server.js';
import { startGitSshServer, type GitSshServer } from './support/git-ssh-server.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
let store: ObjectStore;
let http: Server;
let httpUrl = '';
const BUCKET = 'artifacts';
const { log } = captureLogger();

const nodes = (wf: Workflow) => Object.values(wf.status?.nodes ?? {});
const node = (wf: Workflow, displayName: string) => nodes(wf).find((n) => n.displayName === displayName);
const s3 = () =>
  storeClient(
    { bucket: BUCKET, key: '', endpoint: store.endpoint, insecure: true },
    { accessKey: store.accessKey, secretKey: store.secretKey },
  );
const creds = { accessKeySecret: { name: 'store-creds', key: 'accesskey' }, secretKeySecret: { name: 'store-creds', key: 'secretkey' } };

beforeAll(async () => {
  store = await startObjectStore({ log: (l) => log.info(l) });
  await s3().send(new CreateBucketCommand({ Bucket: BUCKET }));
  http = createServer((req, res) => {
    if (req.url === '/data.txt' && req.headers['x-token'] === 'let-me-in') res.end('from http\n');
    else if (req.url === '/bundle.zip')
      res.end(
        zipStored([
          { name: 'conf/' },
          { name: 'conf/app.ini', body: 'level=debug\n' },
          { name: 'run.sh', body: 'echo run\n', mode: 0o100755 },
        ]),
      );
    else if (req.url === '/secret.txt' && req.headers.authorization === `Basic ${Buffer.from('ann:pw').toString('base64')}`)
      res.end('basic ok');
    else res.writeHead(404).end('no');
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  httpUrl = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  bed = await startRunnerBed('artifacts');
  ({ ns, client } = bed);
  await client.create(SECRETS, ns, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'store-creds' },
    stringData: { accesskey: store.accessKey, secretkey: store.secretKey, user: 'ann', pass: 'pw', wrong: 'not-the-key' },
  });
  await client.create(CONFIGMAPS, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'artifact-repositories', annotations: { 'workflows.plugflow.io/default-artifact-repository': 'minio' } },
    data: {
      minio: `vendorAObject:\n  bucket: ${BUCKET}\n  endpoint: ${store.endpoint}\n  insecure: true\n  accessKeySecret: {name: store-creds, key: accesskey}\n  secretKeySecret: {name: store-creds, key: secretkey}\n`,
      other: `s3:\n  bucket: other-bucket\n  endpoint: ${store.endpoint}\n  insecure: true\n  createBucketIfNotPresent: {}\n  keyFormat: "custom/{{workflow.name}}"\n  accessKeySecret: {name: store-creds, key: accesskey}\n  secretKeySecret: {name: store-creds, key: secretkey}\n`,
    },
  });
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
  await store?.stop();
  http?.close();
});

describe('output and input artifacts', () => {
  it('passes a file, a file stored as-is and a directory tree from one step to the next through the object store', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      passing(
        'pass',
        ['msg', 'plain', 'tree'],
        sh(
          'gen',
          'mkdir -p /tmp/out/sub && echo hello > /tmp/msg.txt && echo as-is > /tmp/plain.txt && echo A > /tmp/out/a && echo B > /tmp/out/sub/b',
          {
            outputs: {
              artifacts: [
                { name: 'msg', path: '/tmp/msg.txt' },
                { name: 'plain', path: '/tmp/plain.txt', archive: { none: {} } },
                { name: 'tree', path: '/tmp/out', archive: { tar: { compressionLevel: 9 } } },
              ],
            },
          },
        ),
        sh('use', 'cat /in/msg.txt /in/plain.txt /in/tree/a /in/tree/sub/b; stat -c %a /in/msg.txt', {
          inputs: {
            artifacts: [
              { name: 'msg', path: '/in/msg.txt', mode: 0o600 },
              { name: 'plain', path: '/in/plain.txt' },
              { name: 'tree', path: '/in/tree' },
            ],
          },
        }),
      ),
    );
    const wf = await waitForCompletion(client, ns, 'pass', 120_000);
    expect(wf.status?.phase, JSON.stringify(nodes(wf).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    expect(node(wf, 'use')?.outputs?.result).toBe('hello\nas-is\nA\nB\n600');
    const gen = node(wf, 'gen')!;
    const msg = gen.outputs?.artifacts?.find((a) => a.name === 'msg');
    expect(msg?.vendorAObject).toMatchObject({ bucket: BUCKET, key: `${ns}/pass/${gen.podName}/msg.tgz`, endpoint: store.endpoint });
    // Credentials are recorded as Secret references, never as values.
    expect(JSON.stringify(wf.status)).not.toContain(store.secretKey);
    const plain = gen.outputs?.artifacts?.find((a) => a.name === 'plain');
    expect(plain?.vendorAObject?.key).toBe(`${ns}/pass/${gen.podName}/plain`);
    const obj = await s3().send(new GetObjectCommand({ Bucket: BUCKET, Key: `${ns}/pass/${gen.podName}/plain` }));
    expect(await obj.Body!.transformToString()).toBe('as-is\n');
  }, 180_000);

  it('takes inputs from raw data, http with headers and basic auth, a DAG task by fromExpression; exports a global artifact', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('sources', {
        entrypoint: 'main',
        artifactRepositoryRef: { key: 'other' },
        templates: [
          {
            name: 'main',
            dag: {
              tasks: [
                { name: 'make', template: 'make' },
                {
                  name: 'read',
                  template: 'read',
                  depends: 'make',
                  arguments: {
                    artifacts: [
                      { name: 'made', fromExpression: "tasks.make.status == 'Succeeded' ? tasks.make.outputs.artifacts.out : nil" },
                    ],
                  },
                },
              ],
            },
          },
          sh('make', 'echo made > /tmp/o', { outputs: { artifacts: [{ name: 'out', path: '/tmp/o', globalName: 'final' }] } }),
          sh('read', 'cat /a/raw /a/web /a/basic /a/made', {
            inputs: {
              artifacts: [
                { name: 'raw', path: '/a/raw', raw: { data: 'raw data\n' } },
                { name: 'web', path: '/a/web', http: { url: `${httpUrl}/data.txt`, headers: [{ name: 'X-Token', value: 'let-me-in' }] } },
                {
                  name: 'basic',
                  path: '/a/basic',
                  http: {
                    url: `${httpUrl}/secret.txt`,
                    auth: {
                      basicAuth: {
                        usernameSecret: { name: 'store-creds', key: 'user' },
                        passwordSecret: { name: 'store-creds', key: 'pass' },
                      },
                    },
                  },
                },
                { name: 'made', path: '/a/made' },
                { name: 'absent', path: '/a/absent', optional: true },
              ],
            },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'sources', 120_000);
    expect(wf.status?.phase, JSON.stringify(nodes(wf).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    expect(node(wf, 'read')?.outputs?.result).toBe('raw data\nfrom http\nbasic okmade');
    // The repository named by artifactRepositoryRef: its bucket (created on demand) and key format.
    const made = node(wf, 'make')!.outputs!.artifacts![0]!;
    expect(made.vendorAObject).toMatchObject({ bucket: 'other-bucket', key: 'custom/sources/out.tgz' });
    expect(wf.status?.outputs?.artifacts).toEqual([expect.objectContaining({ name: 'final', vendorAObject: made.vendorAObject })]);
  }, 180_000);
});

describe('an input with archive: zip', () => {
  it('is unzipped into its path before the command runs', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('unzip', {
        entrypoint: 'main',
        templates: [
          sh('main', 'cat /in/b/conf/app.ini; ls -l /in/b/run.sh | cut -c1-10', {
            inputs: { artifacts: [{ name: 'b', path: '/in/b', archive: { zip: {} }, http: { url: `${httpUrl}/bundle.zip` } }] },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'unzip', 120_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(node(wf, 'unzip')?.outputs?.result).toBe('level=debug\n-rwxr-xr-x');
  }, 150_000);
});

describe('bad input gets a clear error on the node', () => {
  it('a missing output path fails the step naming the artifact; an optional one is skipped', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('missing', {
        entrypoint: 'main',
        templates: [
          { name: 'main', steps: [[{ name: 'opt', template: 'opt' }], [{ name: 'req', template: 'req' }]] },
          sh('opt', 'true', { outputs: { artifacts: [{ name: 'maybe', path: '/tmp/nothing', optional: true }] } }),
          sh('req', 'true', { outputs: { artifacts: [{ name: 'needed', path: '/tmp/nothing-here' }] } }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'missing', 120_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(node(wf, 'opt')?.phase).toBe('Succeeded');
    expect(node(wf, 'opt')?.outputs?.artifacts).toBeUndefined();
    expect(node(wf, 'req')?.message).toContain('output artifact "needed" (path /tmp/nothing-here): /tmp/nothing-here does not exist');
  }, 180_000);

  it('refuses hostile archives (parent paths, escaping links) before the command runs, leaving nothing behind', async () => {
    const put = (key: string, body: Buffer) => s3().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
    await put(
      'hostile/dotdot.tgz',
      tarGz([
        { name: 'x/', type: '5' },
        { name: 'x/../../../../tmp/pwned-by-artifact', body: 'pwned' },
      ]),
    );
    await put(
      'hostile/link.tgz',
      tarGz([
        { name: 'x/', type: '5' },
        { name: 'x/etc', type: '2', link: '/etc' },
      ]),
    );
    const input = (key: string) => ({
      name: 'in',
      path: '/in/x',
      vendorAObject: { bucket: BUCKET, key, endpoint: store.endpoint, insecure: true, ...creds },
    });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('hostile', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'dotdot', template: 'dotdot', continueOn: { failed: true } },
                { name: 'link', template: 'link', continueOn: { failed: true } },
              ],
            ],
          },
          sh('dotdot', 'echo ran', { inputs: { artifacts: [input('hostile/dotdot.tgz')] } }),
          sh('link', 'echo ran', { inputs: { artifacts: [input('hostile/link.tgz')] } }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'hostile', 120_000);
    expect(node(wf, 'dotdot')?.phase).toBe('Failed');
    expect(node(wf, 'dotdot')?.message).toMatch(
      /input artifact "in": the archive was refused and nothing was placed: entry .* outside the artifact's path/,
    );
    expect(node(wf, 'link')?.phase).toBe('Failed');
    expect(node(wf, 'link')?.message).toContain('symbolic link "x/etc" points outside the artifact ("/etc")');
    // The commands never ran.
    for (const n of ['dotdot', 'link']) expect(node(wf, n)?.outputs?.result).toBeUndefined();
  }, 180_000);

  it('wrong credentials, an unknown bucket and a missing key are named on the node', async () => {
    const loc = (over: Record<string, unknown>) => ({
      bucket: BUCKET,
      key: 'pass/none',
      endpoint: store.endpoint,
      insecure: true,
      ...creds,
      ...over,
    });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('bad-store', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'creds', template: 'creds', continueOn: { failed: true } },
                { name: 'bucket', template: 'bucket', continueOn: { failed: true } },
                { name: 'key', template: 'key', continueOn: { failed: true } },
              ],
            ],
          },
          sh('creds', 'true', {
            inputs: {
              artifacts: [{ name: 'i', path: '/i', vendorAObject: loc({ secretKeySecret: { name: 'store-creds', key: 'wrong' } }) }],
            },
          }),
          sh('bucket', 'true', { inputs: { artifacts: [{ name: 'i', path: '/i', vendorAObject: loc({ bucket: 'no-such-bucket' }) }] } }),
          sh('key', 'true', { inputs: { artifacts: [{ name: 'i', path: '/i', vendorAObject: loc({}) }] } }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'bad-store', 120_000);
    expect(node(wf, 'creds')?.message).toContain('the secret key is wrong');
    expect(node(wf, 'bucket')?.message).toContain('the bucket does not exist');
    expect(node(wf, 'key')?.message).toContain(`input artifact "i": downloading s3://${BUCKET}/pass/none`);
    expect(node(wf, 'key')?.message).toContain('no object has that key');
  }, 180_000);

  it('a store that refuses connections fails the step promptly, naming the store, the reason and the attempts; the retries are logged', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const endpoint = `127.0.0.1:${(closed.address() as { port: number }).port}`;
    closed.close();
    const loc = { bucket: BUCKET, key: 'refused/k', endpoint, insecure: true, ...creds };
    const started = Date.now();
    await client.create(
      WORKFLOWS,
      ns,
      workflow('refused-store', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'up', template: 'up', continueOn: { failed: true } },
                { name: 'down', template: 'down', continueOn: { failed: true } },
              ],
            ],
          },
          sh('up', 'echo x > /tmp/o', { outputs: { artifacts: [{ name: 'o', path: '/tmp/o', vendorAObject: loc }] } }),
          sh('down', 'true', { inputs: { artifacts: [{ name: 'i', path: '/i', vendorAObject: loc }] } }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'refused-store', 120_000);
    expect(Date.now() - started).toBeLessThan(60_000);
    const refused = `connect ECONNREFUSED ${endpoint} (gave up after 5 attempts)`;
    expect(node(wf, 'up')?.message).toBe(`output artifact "o": uploading to s3://${BUCKET}/refused/k at ${endpoint}: ${refused}`);
    expect(node(wf, 'down')?.message).toContain(`input artifact "i": downloading s3://${BUCKET}/refused/k at ${endpoint}: ${refused}`);
    // The pod cannot tell the controller while it retries; its container logs say what is retried.
    const waitLog = bed.runner.readLog(ns, node(wf, 'up')!.podName!, 'wait');
    expect(waitLog).toContain(
      `retrying: PutObjectCommand s3://${BUCKET}/refused/k at ${endpoint}: attempt 1 of 5 failed (connect ECONNREFUSED`,
    );
    const initLog = bed.runner.readLog(ns, node(wf, 'down')!.podName!, 'init');
    expect(initLog).toContain(`retrying: GetObjectCommand s3://${BUCKET}/refused/k at ${endpoint}: attempt 4 of 5 failed`);
  }, 180_000);

  it('createBucketIfNotPresent makes a missing bucket when listing or reading, too, not only when writing', async () => {
    const keys = { accessKey: store.accessKey, secretKey: store.secretKey };
    const at = (bucket: string, create: boolean) => ({
      bucket,
      key: 'runs/',
      endpoint: store.endpoint,
      insecure: true,
      ...(create ? { createBucketIfNotPresent: true } : {}),
    });
    await expect(listStored(at('never-made', false), keys)).rejects.toThrow(/the bucket does not exist/);
    expect(await listStored(at('made-on-list', true), keys)).toEqual([]);
    await expect(listStored(at('made-on-list', false), keys)).resolves.toEqual([]);
    // A read of a missing key still fails, naming the key, but the bucket is there afterwards.
    await expect(
      downloadStored({ ...at('made-on-read', true), key: 'runs/one' }, keys, join(mkdtempSync(join(tmpdir(), 'cb-')), 'f')),
    ).rejects.toThrow(/no object has that key/);
    await expect(listStored(at('made-on-read', false), keys)).resolves.toEqual([]);
  });

  it('a repository reference to a missing ConfigMap fails the step before a pod is made', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('no-repo', {
        entrypoint: 'main',
        artifactRepositoryRef: { configMap: 'nowhere' },
        templates: [sh('main', 'echo x > /tmp/x', { outputs: { artifacts: [{ name: 'x', path: '/tmp/x' }] } })],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'no-repo');
    expect(wf.status?.phase).not.toBe('Succeeded');
    expect(node(wf, 'no-repo')?.message).toContain(`spec.artifactRepositoryRef: ConfigMap ${ns}/nowhere does not exist`);
  }, 120_000);
});

describe('getting artifacts out, with the rights of whoever asks', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.close());

  it('plugflow cp copies every output artifact unpacked into DIR/<step>/<artifact>, through the kubeconfig', async () => {
    const out = mkdtempSync(join(tmpdir(), 'plugflow-cp-'));
    const lines: string[] = [];
    const code = await runCopy(
      'pass',
      out,
      { namespace: ns, kubeconfig: cluster().kubeconfigPath },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(readFileSync(join(out, 'gen', 'msg'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(out, 'gen', 'plain'), 'utf8')).toBe('as-is\n');
    expect(readFileSync(join(out, 'gen', 'tree', 'sub', 'b'), 'utf8')).toBe('B\n');
    const none = await runCopy(
      'pass',
      out,
      { namespace: ns, kubeconfig: cluster().kubeconfigPath, artifact: 'nope' },
      { out: () => {}, err: (l) => lines.push(l) },
    );
    expect(none).toBe(1);
    expect(lines.at(-1)).toBe(`Workflow ${ns}/pass has no output artifacts matching artifact "nope"`);
  }, 60_000);

  it('the server streams an artifact to a caller who may read the workflow and the Secret, and refuses one who may not', async () => {
    server = await startTestServer({ authMode: 'client' });
    await grantRole(ns, 'alice', 'artifact-reader', [
      rule('workflows', 'get'),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    await grantRole(ns, 'bob', 'workflow-reader', [rule('workflows', 'get')]);
    const wf = await client.get<Workflow>(WORKFLOWS, ns, 'pass');
    const gen = node(wf, 'gen')!;
    const url = `${server.url}/artifact-files/${ns}/workflows/pass/${gen.id}/outputs/plain`;
    const ok = await call('GET', url, { token: cluster().userTokens.alice });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('as-is\n');
    expect(ok.headers['content-disposition']).toBe('attachment; filename="plain"');
    const denied = await call('GET', url, { token: cluster().userTokens.bob });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('secrets "store-creds" is forbidden');
    const missing = await call('GET', url.replace('/plain', '/nothing'), { token: cluster().userTokens.alice });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(`workflow ${ns}/pass has no output artifact "nothing" on node "${gen.id}"`);
    // The same through the CLI's REST path.
    const out = mkdtempSync(join(tmpdir(), 'plugflow-cp-rest-'));
    const lines: string[] = [];
    const code = await runCopy(
      'pass',
      out,
      { namespace: ns, server: server.url, token: cluster().userTokens.alice, insecureSkipTlsVerify: true, node: 'gen', artifact: 'tree' },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(readFileSync(join(out, 'gen', 'tree', 'a'), 'utf8')).toBe('A\n');
  }, 60_000);
});

describe('the server downloads only from an artifact repository (hardening II: the server fetched any URL for a workflow author)', () => {
  let server: TestServer | undefined;
  let trusting: TestServer | undefined;
  afterAll(async () => {
    await server?.close();
    await trusting?.close();
  });

  it('a literal location in a steps output errors the step; an output at an endpoint its template chose is not fetched', async () => {
    // 1. The review's proof: a steps output whose from is a location record naming an internal plain-HTTP service.
    const internal = JSON.stringify({
      vendorAObject: { bucket: 'x', key: 'data.txt', endpoint: httpUrl.slice('http://'.length), insecure: true },
    });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('ssrf-from', {
        entrypoint: 'main',
        templates: [
          { name: 'main', steps: [[{ name: 'gen', template: 'gen' }]], outputs: { artifacts: [{ name: 'leak', from: internal }] } },
          { name: 'gen', container: { image: 'alpine:3', command: ['true'] } },
        ],
      } as Workflow['spec']),
    );
    const leaked = await waitForCompletion(client, ns, 'ssrf-from', 60_000);
    expect(leaked.status?.phase).toBe('Error');
    expect(node(leaked, 'ssrf-from')?.message).toContain(
      'outputs.artifacts[leak]: from names a location no step of this workflow produced',
    );
    expect(JSON.stringify(leaked.status)).not.toContain(httpUrl.slice('http://'.length));

    // 2. A real upload to a store the template names itself (the same MinIO under another name): the step
    //    runs, but the server does not fetch from an endpoint the author chose.
    const elsewhere = store.endpoint.replace('127.0.0.1', 'localhost');
    await client.create(
      WORKFLOWS,
      ns,
      workflow('own-store', {
        entrypoint: 'main',
        templates: [
          sh('main', 'echo mine > /tmp/o.txt', {
            outputs: {
              artifacts: [
                {
                  name: 'o',
                  path: '/tmp/o.txt',
                  archive: { none: {} },
                  vendorAObject: { bucket: BUCKET, key: 'chosen/o.txt', endpoint: elsewhere, insecure: true, ...creds },
                },
              ],
            },
          }),
        ],
      } as Workflow['spec']),
    );
    const own = await waitForCompletion(client, ns, 'own-store', 60_000);
    expect(own.status?.phase, own.status?.message).toBe('Succeeded');
    server = await startTestServer({ authMode: 'client' });
    await grantRole(ns, 'alice', 'artifact-downloader', [
      rule('workflows', 'get'),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    const url = `${server.url}/artifact-files/${ns}/workflows/own-store/${node(own, 'own-store')!.id}/outputs/o`;
    const refused = await call('GET', url, { token: cluster().userTokens.alice });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(
      `artifact "o" of workflow ${ns}/own-store is stored at http://${elsewhere}, which is not an artifact repository of its namespace or of the installation: the server downloads only from those (an operator can trust more stores with plugflow server --artifact-endpoint)`,
    );
    // An operator who trusts that store lets it through.
    trusting = await startTestServer({ authMode: 'client', artifactEndpoints: [`http://${elsewhere}`] });
    const ok = await call('GET', url.replace(server.url, trusting.url), { token: cluster().userTokens.alice });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('mine\n');
  }, 120_000);
});

describe("workflows written with the peer's field names", () => {
  it('s3 outputs and inputs, archiveLocation.s3 and metrics.prometheus run as their spec names do', async () => {
    const loc = (key: string) => ({ bucket: BUCKET, key, endpoint: store.endpoint, insecure: true, ...creds });
    await client.create(WORKFLOWS, ns, {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'peer-names' },
      spec: {
        entrypoint: 'main',
        metrics: { prometheus: [{ name: 'pf_peer_names_total', help: 'Peer names', counter: { value: '1' } }] },
        templates: [
          {
            name: 'main',
            steps: [
              [{ name: 'make', template: 'make' }],
              [{ name: 'use', template: 'use', arguments: { artifacts: [{ name: 'in', from: '{{steps.make.outputs.artifacts.out}}' }] } }],
            ],
          },
          {
            name: 'make',
            archiveLocation: { s3: { key: 'peer/{{workflow.name}}' } },
            outputs: { artifacts: [{ name: 'out', path: '/tmp/out.txt', s3: loc(`peer-names/${ns}/out.tgz`) }] },
            script: { image: 'alpine:3', command: ['sh'], source: 'echo from-s3 > /tmp/out.txt' },
          },
          {
            name: 'use',
            inputs: { artifacts: [{ name: 'in', path: '/in.txt' }] },
            container: { image: 'alpine:3', command: ['cat', '/in.txt'] },
          },
        ],
      },
    });
    const wf = await waitForCompletion(client, ns, 'peer-names', 120_000);
    expect(wf.status?.phase, JSON.stringify(nodes(wf).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    expect(node(wf, 'use')?.outputs?.result).toBe('from-s3');
    // What plugflow writes uses the spec's names.
    expect(node(wf, 'make')?.outputs?.artifacts?.[0]?.vendorAObject).toMatchObject({ bucket: BUCKET, key: `peer-names/${ns}/out.tgz` });
  }, 150_000);
});

describe('archiveLogs', () => {
  it("saves the main container's stdout and stderr as the artifact main-logs", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('logs', { entrypoint: 'main', archiveLogs: true, templates: [sh('main', 'echo to-stdout; echo to-stderr >&2')] }),
    );
    const wf = await waitForCompletion(client, ns, 'logs', 120_000);
    expect(wf.status?.phase).toBe('Succeeded');
    const logs = node(wf, 'logs')?.outputs?.artifacts?.find((a) => a.name === 'main-logs');
    expect(logs?.vendorAObject?.key).toBe(`${ns}/logs/${node(wf, 'logs')!.podName}/main-logs.tgz`);
    const out = mkdtempSync(join(tmpdir(), 'plugflow-logs-'));
    expect(await runCopy('logs', out, { namespace: ns, kubeconfig: cluster().kubeconfigPath }, { out: () => {}, err: () => {} })).toBe(0);
    // Both streams, each line whole (their order across the two streams is not kept, as in a container log).
    expect(
      readFileSync(join(out, 'logs', 'main-logs'), 'utf8')
        .split('\n')
        .sort(),
    ).toEqual(['', 'to-stderr', 'to-stdout']);
  }, 120_000);

  it("archived, the log is read from the artifact repository: through the server, with the caller's rights", async () => {
    const wf = await client.get<Workflow>(WORKFLOWS, ns, 'logs');
    const db = await startPostgres({ log: (l) => log.info(l) });
    const archive = ArchiveStore.open(db.url);
    const srv = await startTestServer({ authMode: 'client', archiveUrl: db.url });
    try {
      expect(await archive.archive(wf)).toBe('archived');
      const { erin, dave } = cluster().userTokens;
      await grantRole(ns, 'erin', 'archived-log-reader', [
        rule('workflows', 'get', 'list'),
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      ]);
      const uid = wf.metadata!.uid!;
      const id = node(wf, 'logs')!.id;
      const sse = await openSse(`${srv.url}/api/v1/archived-workflows/${uid}/log?nodeId=${id}`, erin);
      expect(sse.status).toBe(200);
      const lines = (await sse.rest()).map((m) => (m.data.result as { content: string }).content);
      expect(lines.sort()).toEqual(['to-stderr', 'to-stdout']);
      // The stored object itself, at the peer's path.
      const file = await call('GET', `${srv.url}/artifact-files/${ns}/archived-workflows/${uid}/${id}/outputs/main-logs`, { token: erin });
      expect(file.status).toBe(200);
      expect(file.headers['content-disposition']).toBe('attachment; filename="main-logs.tgz"');
      // A node without a saved log says why; someone who may not read the namespace sees nothing.
      const none = await call('GET', `${srv.url}/api/v1/archived-workflows/${uid}/log?nodeId=nope`, { token: erin });
      expect(none.status).toBe(404);
      expect(none.body.message).toMatch(
        /no output artifact "main-logs" on node "nope" \(its log is kept only when the workflow set archiveLogs\)/,
      );
      expect((await call('GET', `${srv.url}/api/v1/archived-workflows/${uid}/log?nodeId=${id}`, { token: dave })).status).toBe(404);
    } finally {
      await srv.close();
      await archive.close();
      await db.stop();
    }
  }, 120_000);
});

describe('the examples in examples/artifacts run unchanged', () => {
  const dir = join(import.meta.dirname, '..', 'examples', 'artifacts');
  // What a step of each example prints, when the data it got proves the artifact arrived.
  const printed: Record<string, [string, RegExp]> = {
    'arguments-artifacts.yaml': ['arguments-artifacts-', /^one\ntwo$/],
    'artifact-disable-archive.yaml': ['read', /^a=1\nb=2\nkept as is\n3$/],
    'artifact-gc.yaml': ['check', /^temporary$/],
    'artifact-path-placeholders.yaml': ['artifact-path-placeholders-', /^3$/],
    'artifact-passing-subpath.yaml': ['read', /^hello world$/],
    'artifact-passing.yaml': ['consume', /^hello world\nstatus\nwhen\nok$/],
    'conditional-artifacts.yaml': ['show', /^it was (heads|tails)$/],
    'data-transformations.yaml': ['read', /^(one|two)$/],
    'global-output-artifact.yaml': ['report', /^VERSION\napp\nv1$/],
    'input-artifact-raw.yaml': ['input-artifact-raw-', /^2$/],
    'key-only-artifact.yaml': ['get', /^stored under a key of my choosing$/],
  };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    it(
      file,
      async () => {
        const wf = readYamlDocument(readFileSync(join(dir, file), 'utf8'), file) as Workflow;
        const created = await client.create<Workflow>(WORKFLOWS, ns, { ...wf, metadata: { ...wf.metadata, namespace: ns } });
        const done = await waitForCompletion(client, ns, created.metadata.name!, 120_000);
        expect(done.status?.phase, JSON.stringify(nodes(done).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
        const [step, pattern] = printed[file] ?? ['', /^$/];
        expect(file in printed, `add what ${file} prints to the table above`).toBe(true);
        const leaf = nodes(done).find((n) => n.type === 'Pod' && (n.displayName === step || n.displayName?.startsWith(step)));
        expect(leaf?.outputs?.result).toMatch(pattern);
        if (file === 'data-transformations.yaml') {
          // The data step's result: the listed keys the expression kept, as JSON.
          const list = nodes(done).find((n) => n.displayName === 'list');
          const name = done.metadata.name!;
          expect(JSON.parse(list?.outputs?.result ?? 'null')).toEqual([`data/${name}/one.txt`, `data/${name}/two.txt`]);
          expect(nodes(done).filter((n) => n.displayName?.startsWith('read(')).length).toBe(2);
        }
      },
      150_000,
    );
  }
});

describe('git input artifacts (a real git http-backend with basic auth)', () => {
  let git: GitServer;
  let first = '';
  let pr = '';
  beforeAll(async () => {
    git = await startGitServer({ username: 'ann', password: 'pw' });
    makeRepo(git.root, 'app', (work) => {
      first = commitFile(work, 'README', 'v1\n', 'first');
      gitCmd(work, 'tag', 'v1');
      commitFile(work, 'README', 'v2\n', 'second');
      gitCmd(work, 'checkout', '-q', '-b', 'feature');
      commitFile(work, 'feature.txt', 'on the branch\n', 'feature');
      gitCmd(work, 'checkout', '-q', '-b', 'proposal', 'main');
      pr = commitFile(work, 'PR.md', 'proposed\n', 'a proposal');
      gitCmd(work, 'update-ref', 'refs/pull/7/head', pr);
      gitCmd(work, 'checkout', '-q', 'main');
      gitCmd(work, 'branch', '-q', '-D', 'proposal');
    });
    makeRepo(git.root, 'mods', (work) => {
      commitFile(work, '.gitmodules', '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n', 'with a submodule');
    });
  });
  afterAll(() => git?.close());

  it('clones a branch, a tag, a commit, a shallow single branch; refuses wrong credentials and unfetchable submodules', async () => {
    const auth = { usernameSecret: { name: 'store-creds', key: 'user' }, passwordSecret: { name: 'store-creds', key: 'pass' } };
    const step = (name: string, gitFields: Record<string, unknown>, script: string) =>
      sh(name, script, {
        inputs: { artifacts: [{ name: 'src', path: '/src', git: { repo: `${git.url}/app.git`, ...auth, ...gitFields } }] },
      });
    await client.create(
      WORKFLOWS,
      ns,
      workflow('git', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              ['head', 'commit', 'tag', 'branch', 'pr', 'badauth', 'mods', 'nomods'].map((n) => ({
                name: n,
                template: n,
                continueOn: { failed: true },
              })),
            ],
          },
          step('head', {}, 'cat /src/README'),
          step('commit', { revision: first }, 'cat /src/README'),
          step('tag', { revision: 'v1' }, 'cat /src/README'),
          step('branch', { branch: 'feature', singleBranch: true, depth: 1 }, 'cat /src/feature.txt'),
          step('pr', { revision: pr, fetch: ['+refs/pull/*/head:refs/remotes/origin/pr/*'] }, 'cat /src/PR.md'),
          step('badauth', { passwordSecret: { name: 'store-creds', key: 'wrong' } }, 'true'),
          step('mods', { repo: `${git.url}/mods.git` }, 'true'),
          step('nomods', { repo: `${git.url}/mods.git`, disableSubmodules: true }, 'ls -a /src | grep -c gitmodules'),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'git', 120_000);
    const result = (n: string) => [node(wf, n)?.phase, node(wf, n)?.outputs?.result ?? node(wf, n)?.message];
    expect(result('head')).toEqual(['Succeeded', 'v2']);
    expect(result('commit')).toEqual(['Succeeded', 'v1']);
    expect(result('tag')).toEqual(['Succeeded', 'v1']);
    expect(result('branch')).toEqual(['Succeeded', 'on the branch']);
    expect(result('pr')).toEqual(['Succeeded', 'proposed']);
    expect(result('badauth')[0]).toBe('Failed');
    expect(result('badauth')[1]).toContain(`input artifact "src": cloning ${git.url}/app.git: the server refused the credentials`);
    expect(result('mods')[1]).toContain('the repository has submodules');
    expect(result('nomods')).toEqual(['Succeeded', '1']);
  }, 150_000);
});

describe('git input artifacts over SSH (a real SSH server running git upload-pack)', () => {
  let ssh: GitSshServer;
  beforeAll(async () => {
    ssh = await startGitSshServer();
    makeRepo(ssh.root, 'app', (work) => commitFile(work, 'README', 'over ssh\n', 'first'));
    await client.create(SECRETS, ns, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ssh-key' },
      stringData: { id: ssh.clientKey },
    });
  });
  afterAll(() => ssh?.close());

  it('clones with the private key from a Secret, which reaches the init container only', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('git-ssh', {
        entrypoint: 'main',
        templates: [
          sh('main', 'cat /src/README; env | grep -c "PRIVATE KEY" || true', {
            inputs: {
              artifacts: [
                {
                  name: 'src',
                  path: '/src',
                  git: { repo: `${ssh.url}/app.git`, sshPrivateKeySecret: { name: 'ssh-key', key: 'id' }, insecureIgnoreHostKey: true },
                },
              ],
            },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'git-ssh', 120_000);
    expect(wf.status?.phase, JSON.stringify(wf.status?.nodes)).toBe('Succeeded');
    expect(node(wf, 'git-ssh')?.outputs?.result).toBe('over ssh\n0');
  }, 150_000);
});

describe('artifact garbage collection', () => {
  const exists = async (key: string): Promise<boolean> => {
    try {
      await s3().send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      return true;
    } catch {
      return false;
    }
  };
  const keysOf = (wf: Workflow) =>
    Object.fromEntries(
      nodes(wf).flatMap((n) => (n.type === 'Pod' ? (n.outputs?.artifacts ?? []) : []).map((a) => [a.name, a.vendorAObject!.key!])),
    );
  const producer = (name: string, spec: Partial<Workflow['spec']>, artifacts: Artifact[]) =>
    workflow(name, {
      entrypoint: 'main',
      ...spec,
      templates: [sh('main', 'echo a > /tmp/a; echo b > /tmp/b; mkdir -p /tmp/d && echo c > /tmp/d/c', { outputs: { artifacts } })],
    });

  it('OnWorkflowCompletion deletes the artifacts once the workflow finished, keeps those marked Never, in a pod with its service account and metadata', async () => {
    await client.create(SERVICE_ACCOUNTS, ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gc-sa' } });
    await client.create(
      WORKFLOWS,
      ns,
      producer(
        'gc-done',
        { artifactGC: { strategy: 'OnWorkflowCompletion', serviceAccountName: 'gc-sa', podMetadata: { labels: { team: 'data' } } } },
        [
          { name: 'a', path: '/tmp/a' },
          { name: 'dir', path: '/tmp/d', archive: { none: {} } },
          { name: 'keep', path: '/tmp/b', artifactGC: { strategy: 'Never' } },
        ],
      ),
    );
    const done = await waitForCompletion(client, ns, 'gc-done', 120_000);
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    expect(done.metadata.finalizers).toContain('workflows.plugflow.io/artifact-gc');
    const keys = keysOf(done);
    const collected = await eventually(async () => {
      const wf = await client.get<Workflow & { status: { artifactGCStatus?: { strategiesProcessed?: Record<string, boolean> } } }>(
        WORKFLOWS,
        ns,
        'gc-done',
      );
      return wf.status.artifactGCStatus?.strategiesProcessed?.OnWorkflowCompletion ? wf : undefined;
    }, 'OnWorkflowCompletion processed');
    expect(collected.status?.conditions ?? []).toEqual([]);
    expect(await exists(keys.a!)).toBe(false);
    expect(await exists(`${keys.dir}/c`)).toBe(false);
    expect(await exists(keys.keep!)).toBe(true);
    const pod = await client.get<{
      metadata: { labels: Record<string, string> };
      spec: { automountServiceAccountToken: boolean; serviceAccountName: string };
    }>(
      PODS,
      ns,
      (
        await client.list<{ metadata: { name: string } }>(PODS, {
          namespace: ns,
          labelSelector: 'workflows.plugflow.io/artifact-gc-workflow=gc-done',
        })
      ).items[0]!.metadata.name,
    );
    expect(pod.metadata.labels.team).toBe('data');
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.serviceAccountName).toBe('gc-sa');
    // Deleting it now has nothing left to collect: it goes at once.
    await client.delete(WORKFLOWS, ns, 'gc-done');
    await eventually(
      async () =>
        client.get(WORKFLOWS, ns, 'gc-done').then(
          () => undefined,
          (err: unknown) => isNotFound(err),
        ),
      'gc-done deleted',
    );
  }, 180_000);

  it('a WorkflowTemplate that sets spec.artifactGC collects the artifacts of the workflows made from it', async () => {
    const template = producer('gc-template', { artifactGC: { strategy: 'OnWorkflowCompletion' } }, [{ name: 'a', path: '/tmp/a' }]);
    await client.create(WORKFLOW_TEMPLATES, ns, { ...template, kind: 'WorkflowTemplate' });
    await client.create(WORKFLOWS, ns, workflow('gc-from-template', { workflowTemplateRef: { name: 'gc-template' } } as Workflow['spec']));
    const done = await waitForCompletion(client, ns, 'gc-from-template', 120_000);
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const key = keysOf(done).a!;
    await eventually(async () => ((await exists(key)) ? undefined : true), `${key} deleted`);
    await client.delete(WORKFLOWS, ns, 'gc-from-template');
    await eventually(
      async () =>
        client.get(WORKFLOWS, ns, 'gc-from-template').then(
          () => undefined,
          (err: unknown) => isNotFound(err),
        ),
      'gc-from-template deleted',
    );
  }, 180_000);

  it('OnWorkflowDeletion holds the deleted workflow until its artifacts are gone; a failed GC is reported and retried when its pod is deleted', async () => {
    await client.create(SECRETS, ns, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'gc-creds' },
      stringData: { a: store.accessKey, s: store.secretKey },
    });
    const own = {
      bucket: BUCKET,
      endpoint: store.endpoint,
      insecure: true,
      accessKeySecret: { name: 'gc-creds', key: 'a' },
      secretKeySecret: { name: 'gc-creds', key: 's' },
    };
    await client.create(
      WORKFLOWS,
      ns,
      producer('gc-del', { artifactGC: { strategy: 'OnWorkflowDeletion' } }, [
        { name: 'a', path: '/tmp/a', vendorAObject: { ...own, key: 'gc-del/a.tgz' } },
      ]),
    );
    const done = await waitForCompletion(client, ns, 'gc-del', 120_000);
    expect(done.status?.phase).toBe('Succeeded');
    expect(await exists('gc-del/a.tgz')).toBe(true);
    // Break the credentials, then delete: the GC pod fails, the workflow stays and says why.
    await client.mergePatch(SECRETS, ns, 'gc-creds', { stringData: { s: 'wrong' } });
    await client.delete(WORKFLOWS, ns, 'gc-del');
    const stuck = await eventually(async () => {
      const wf = await client.get<Workflow>(WORKFLOWS, ns, 'gc-del');
      return wf.status?.conditions?.find((c) => c.type === 'ArtifactGCError') ? wf : undefined;
    }, 'the ArtifactGCError condition');
    expect(stuck.metadata.deletionTimestamp).toBeDefined();
    expect(stuck.status!.conditions!.find((c) => c.type === 'ArtifactGCError')!.message).toContain('the secret key is wrong');
    expect(await exists('gc-del/a.tgz')).toBe(true);
    // Fix them and delete the failed pod: the next try collects, and the workflow is gone.
    await client.mergePatch(SECRETS, ns, 'gc-creds', { stringData: { s: store.secretKey } });
    const gcPods = await client.list<{ metadata: { name: string } }>(PODS, {
      namespace: ns,
      labelSelector: 'workflows.plugflow.io/artifact-gc-workflow=gc-del',
    });
    for (const p of gcPods.items) await client.delete(PODS, ns, p.metadata.name, { gracePeriodSeconds: 0 });
    await eventually(
      async () =>
        client.get(WORKFLOWS, ns, 'gc-del').then(
          () => undefined,
          (err: unknown) => isNotFound(err),
        ),
      'gc-del deleted',
      90_000,
    );
    expect(await exists('gc-del/a.tgz')).toBe(false);
  }, 240_000);
});
