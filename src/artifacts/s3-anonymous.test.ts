/**
 * Anonymous object-store access must be anonymous: with no credentials given, the SDK's default
 * credential chain (environment, shared files, web identity, the EC2/ECS metadata endpoints — the
 * node's or the server's own identity) is never consulted, and no request carries a signature or a
 * credential header. With credentials given, requests are signed with exactly those.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StoreLocation } from './plan.js';
import { downloadFile, listPrefix } from './s3.js';

const BODY = 'hello from the store\n';
const AMBIENT = {
  AWS_ACCESS_KEY_ID: 'AKIDAMBIENT',
  AWS_SECRET_ACCESS_KEY: 'ambient-secret',
  AWS_SESSION_TOKEN: 'ambient-token',
};
/** Every variable this suite sets; each is restored (or removed) afterwards. */
const TOUCHED = [
  ...Object.keys(AMBIENT),
  'AWS_EC2_METADATA_SERVICE_ENDPOINT',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_PROFILE',
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
];

const storeSeen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
const metadataSeen: string[] = [];
const servers: Server[] = [];
const saved: Record<string, string | undefined> = {};
let storePort = 0;

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  // A minimal S3 on the loopback: GetObject answers the body, ListObjectsV2 one key, HeadBucket 200.
  storePort = await listen(
    createServer((req, res) => {
      storeSeen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      req.resume();
      const url = new URL(req.url ?? '/', 'http://store');
      if (req.method === 'GET' && url.searchParams.get('list-type') === '2') {
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
            '<Name>bucket</Name><Prefix>dir/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>' +
            '<Contents><Key>dir/a.txt</Key><Size>3</Size></Contents></ListBucketResult>',
        );
      } else if (req.method === 'HEAD') {
        res.writeHead(200);
        res.end();
      } else if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(Buffer.byteLength(BODY)) });
        res.end(BODY);
      } else {
        res.writeHead(405);
        res.end();
      }
    }),
  );
  // Stands in for the EC2 instance metadata service and the ECS container credentials endpoint.
  const metadataPort = await listen(
    createServer((req, res) => {
      metadataSeen.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(404);
      res.end();
    }),
  );
  for (const name of TOUCHED) saved[name] = process.env[name];
  Object.assign(process.env, AMBIENT);
  process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = `http://127.0.0.1:${metadataPort}`;
  process.env.AWS_CONTAINER_CREDENTIALS_FULL_URI = `http://127.0.0.1:${metadataPort}/creds`;
  delete process.env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI;
  delete process.env.AWS_EC2_METADATA_DISABLED;
});

afterAll(async () => {
  for (const name of TOUCHED) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

beforeEach(() => {
  storeSeen.length = 0;
  metadataSeen.length = 0;
});

const location = (key: string): StoreLocation => ({ bucket: 'bucket', key, endpoint: `127.0.0.1:${storePort}`, insecure: true });
const target = () => join(mkdtempSync(join(tmpdir(), 'plugflow-s3-anon-')), 'fetched');

/**
 * The SDK names where the identity of a request came from in its user agent (`m/...` feature ids,
 * @aws-sdk/types feature-ids.d.ts: "g" environment variables, "n" a profile, "z" the container
 * endpoint, "0" instance metadata, ...): any of them shows a credential provider was consulted.
 */
const CREDENTIAL_FEATURES = new Set('e g h i j k l m n o p q r s t u v w x y z 0 AC AD'.split(' '));

function credentialFeatures(): string[] {
  const out: string[] = [];
  for (const r of storeSeen) {
    const m = / m\/([^ ]+)/.exec(String(r.headers['user-agent'] ?? ''));
    for (const id of m ? m[1].split(',') : []) if (CREDENTIAL_FEATURES.has(id)) out.push(`${r.method} ${r.url}: ${id}`);
  }
  return out;
}

/** Every header of every request the store was sent that shows a credential or a signature. */
function credentialHeaders(): string[] {
  const out: string[] = [];
  for (const r of storeSeen)
    for (const [name, value] of Object.entries(r.headers)) {
      const text = String(value);
      if (
        name === 'authorization' ||
        name === 'x-amz-security-token' ||
        name === 'x-amz-date' ||
        name.startsWith('x-amz-content-sha256') ||
        text.includes('AKIDAMBIENT') ||
        text.includes('ambient-token') ||
        text.includes('ambient-secret')
      )
        out.push(`${r.method} ${r.url}: ${name}: ${text}`);
    }
  return out;
}

describe('anonymous object-store access', () => {
  it('downloads without consulting the ambient credentials or signing', async () => {
    const file = target();
    await downloadFile(location('dir/a.txt'), undefined, file);
    expect(readFileSync(file, 'utf8')).toBe(BODY);
    expect(storeSeen.length).toBeGreaterThan(0);
    expect(credentialHeaders()).toEqual([]);
    expect(credentialFeatures()).toEqual([]);
    expect(metadataSeen).toEqual([]);
  });

  it('never polls the metadata endpoints when the process has no credentials of its own', async () => {
    for (const name of Object.keys(AMBIENT)) delete process.env[name];
    // No profile either: the chain would go on to the container and instance metadata endpoints.
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-s3-anon-'));
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'no-credentials');
    process.env.AWS_CONFIG_FILE = join(dir, 'no-config');
    try {
      const file = target();
      await downloadFile(location('dir/a.txt'), undefined, file);
      expect(readFileSync(file, 'utf8')).toBe(BODY);
      expect(credentialHeaders()).toEqual([]);
      expect(credentialFeatures()).toEqual([]);
      expect(metadataSeen).toEqual([]);
    } finally {
      Object.assign(process.env, AMBIENT);
      delete process.env.AWS_SHARED_CREDENTIALS_FILE;
      delete process.env.AWS_CONFIG_FILE;
    }
  });

  it('checks the bucket, lists and downloads anonymously (HeadBucket, ListObjectsV2, GetObject)', async () => {
    const loc = { ...location('dir/a.txt'), createBucketIfNotPresent: true };
    expect(await listPrefix(loc, undefined, 'dir/')).toEqual([{ key: 'dir/a.txt', rel: 'a.txt' }]);
    const file = target();
    await downloadFile(loc, undefined, file);
    expect(readFileSync(file, 'utf8')).toBe(BODY);
    expect(storeSeen.map((r) => r.method)).toContain('HEAD');
    expect(credentialHeaders()).toEqual([]);
    expect(credentialFeatures()).toEqual([]);
    expect(metadataSeen).toEqual([]);
  });

  it('signs with exactly the given credentials when there are some', async () => {
    const file = target();
    await downloadFile(location('dir/a.txt'), { accessKey: 'AKIDGIVEN', secretKey: 'given-secret' }, file);
    expect(readFileSync(file, 'utf8')).toBe(BODY);
    const get = storeSeen.find((r) => r.method === 'GET');
    expect(get?.headers.authorization).toContain('Credential=AKIDGIVEN/');
    expect(get?.headers['x-amz-security-token']).toBeUndefined();
    expect(JSON.stringify(storeSeen.map((r) => r.headers))).not.toMatch(/AKIDAMBIENT|ambient-token/);
    expect(metadataSeen).toEqual([]);
  });
});
