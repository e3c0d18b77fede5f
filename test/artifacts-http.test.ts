/**
 * http artifacts end to end with OAuth2 and uploads: the real API server, the local pod runner
 * running the real init/emissary/wait programs, and real loopback servers this suite starts — an
 * OAuth2 token endpoint (client-credentials grant), a webHDFS-like "name node" that answers a PUT
 * with 307 to a "data node" of another origin, and that data node, which keeps what it is given
 * and serves it back. No artifact repository exists in the namespace: http outputs need none.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passing, sh } from './support/artifact-workflows.js';
import type { Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { SECRETS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig, cluster } from './support/cluster.js';
import { call, grantRole, rule, startTestServer, type TestServer } from './support/server.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
let server: TestServer | undefined;
const servers: Server[] = [];
const { log } = captureLogger();
const seen: Record<'token' | 'namenode' | 'datanode', Seen[]> = { token: [], namenode: [], datanode: [] };
const stored = new Map<string, Buffer>();
const bases = { token: '', namenode: '', datanode: '' };
const TOKEN = 'tok-e2e-7f3a';

async function listen(kind: keyof typeof seen, handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen[kind].push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  bases[kind] = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
}

const pathOf = (url: string) => new URL(url, 'http://x').pathname;
const oauth2 = {
  clientIDSecret: { name: 'oauth-sec', key: 'clientID' },
  clientSecretSecret: { name: 'oauth-sec', key: 'clientSecret' },
  tokenURLSecret: { name: 'oauth-sec', key: 'tokenURL' },
  scopes: ['some', 'scopes'],
  endpointParams: [{ key: 'customkey', value: 'customvalue' }],
};
const nodes = (wf: Workflow) => Object.values(wf.status?.nodes ?? {});
const node = (wf: Workflow, name: string) => nodes(wf).find((n) => n.displayName === name);

beforeAll(async () => {
  await listen('token', (req, res, body) => {
    const form = new URLSearchParams(body.toString());
    const ok =
      req.headers.authorization === `Basic ${Buffer.from('app-1:client-s3cret').toString('base64')}` &&
      form.get('grant_type') === 'client_credentials';
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { access_token: TOKEN, token_type: 'Bearer', expires_in: 60 } : { error: 'invalid_client' }));
  });
  await listen('datanode', (req, res, body) => {
    const p = pathOf(req.url ?? '/');
    if (req.method === 'PUT') {
      stored.set(p, body);
      return res.writeHead(201).end();
    }
    const data = stored.get(p);
    if (!data) return res.writeHead(404).end();
    res.end(data);
  });
  await listen('namenode', (req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end();
    const p = pathOf(req.url ?? '/');
    if (p.startsWith('/denied')) return res.writeHead(403).end();
    // webHDFS: the name node sends both reads and writes to a data node (another origin).
    res.writeHead(307, { location: `${bases.datanode}${p}?op=${req.method === 'PUT' ? 'CREATE' : 'OPEN'}&namenoderpcaddress=nn:8020` });
    res.end();
  });
  bed = await startRunnerBed('artifacts-http');
  ({ ns, client } = bed);
  await client.create(SECRETS, ns, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'oauth-sec' },
    stringData: { clientID: 'app-1', clientSecret: 'client-s3cret', tokenURL: `${bases.token}/oauth2/token` },
  });
  stored.set('/webhdfs/v1/given.txt', Buffer.from('given by the data node\n'));
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 300_000);

afterAll(async () => {
  await server?.close();
  await controller?.stop();
  await bed?.stop();
  for (const s of servers) s.close();
});

describe('http artifacts with OAuth2, uploaded with PUT', () => {
  it('a step PUTs its output through a 307 to the data node; the next step GETs it back and an OAuth2 input, with a bearer token', async () => {
    const url = `${bases.namenode}/webhdfs/v1/out.txt?op=CREATE&overwrite=true`;
    await client.create(
      WORKFLOWS,
      ns,
      passing(
        'webhdfs',
        ['hdfs-out'],
        sh('gen', 'echo written by gen > /tmp/out.txt', {
          outputs: {
            artifacts: [
              { name: 'hdfs-out', path: '/tmp/out.txt', http: { url, auth: { oauth2 }, headers: [{ name: 'X-Custom', value: 'c1' }] } },
            ],
          },
        }),
        sh('use', 'cat /in/hdfs-out /in/given', {
          inputs: {
            artifacts: [
              { name: 'hdfs-out', path: '/in/hdfs-out' },
              { name: 'given', path: '/in/given', http: { url: `${bases.namenode}/webhdfs/v1/given.txt?op=OPEN`, auth: { oauth2 } } },
            ],
          },
        }),
      ),
    );
    const wf = await waitForCompletion(client, ns, 'webhdfs', 120_000);
    expect(wf.status?.phase, JSON.stringify(nodes(wf).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    expect(node(wf, 'use')?.outputs?.result).toBe('written by gen\ngiven by the data node');
    // The record in status is the location as written (Secret references, no values).
    expect(node(wf, 'gen')?.outputs?.artifacts?.[0]).toMatchObject({
      name: 'hdfs-out',
      path: '/tmp/out.txt',
      http: { url, auth: { oauth2 } },
    });
    expect(JSON.stringify(wf.status)).not.toContain('client-s3cret');
    // Token requests: a form POST with the scopes and the endpoint parameter.
    expect(seen.token.length).toBeGreaterThanOrEqual(2);
    expect(Object.fromEntries(new URLSearchParams(seen.token[0]!.body.toString()))).toEqual({
      grant_type: 'client_credentials',
      scope: 'some scopes',
      customkey: 'customvalue',
    });
    // The name node got the token and the header; the data node (another origin) neither, but the whole file.
    const put = seen.namenode.find((r) => r.method === 'PUT')!;
    expect(put.headers['x-custom']).toBe('c1');
    const upload = seen.datanode.find((r) => r.method === 'PUT')!;
    expect(upload.url).toBe('/webhdfs/v1/out.txt?op=CREATE&namenoderpcaddress=nn:8020');
    expect(upload.headers.authorization).toBeUndefined();
    expect(upload.headers['x-custom']).toBeUndefined();
    expect(stored.get('/webhdfs/v1/out.txt')?.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // tar+gzip, the default
    for (const r of seen.datanode) expect(r.headers.authorization).toBeUndefined();

    // The server downloads from artifact repositories only: not from the URL an http output names.
    server = await startTestServer({ authMode: 'client' });
    await grantRole(ns, 'alice', 'artifact-reader', [
      rule('workflows', 'get'),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    const refused = await call('GET', `${server.url}/artifact-files/${ns}/workflows/webhdfs/${node(wf, 'gen')!.id}/outputs/hdfs-out`, {
      token: cluster().userTokens.alice,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(
      `artifact "hdfs-out" of workflow ${ns}/webhdfs is not in an object store (it was uploaded to its http url): the server downloads only from the stores of artifact repositories; fetch it from where it is`,
    );
  }, 180_000);

  it('a refused upload fails the step naming the artifact and the status, not the query string', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('denied', {
        entrypoint: 'main',
        templates: [
          sh('main', 'echo x > /tmp/x', {
            outputs: {
              artifacts: [{ name: 'x', path: '/tmp/x', http: { url: `${bases.namenode}/denied/x?op=CREATE&sig=abc`, auth: { oauth2 } } }],
            },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'denied', 120_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(node(wf, 'denied')?.message).toContain(`output artifact "x": PUT ${bases.namenode}/denied/x?…: the server answered HTTP 403`);
  }, 150_000);
});
