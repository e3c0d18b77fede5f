import { KubeConfig } from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadKubeAccess, readSimpleAccess } from './kube-access.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'main',
    contexts: [
      { name: 'main', context: { cluster: 'c', user: 'u', namespace: 'ns1' } },
      { name: 'other', context: { cluster: 'c2', user: 'u' } },
    ],
    clusters: [
      { name: 'c', cluster },
      { name: 'c2', cluster: { server: 'https://other.example:6443', 'insecure-skip-tls-verify': true } },
    ],
    users: [{ name: 'u', user }],
    ...extra,
  });
}

/** What each loader puts into request options: the fields KubeClient reads. */
async function applied(access: { applyToHTTPSOptions(o: RequestOptions): Promise<void> }) {
  const o: RequestOptions = {};
  await access.applyToHTTPSOptions(o);
  const auth = Object.entries((o.headers ?? {}) as Record<string, unknown>).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
  const s = (x: unknown) => (x === undefined ? undefined : Buffer.from(x as Buffer | string).toString());
  return {
    ca: s(o.ca),
    cert: s(o.cert),
    key: s(o.key),
    auth,
    basic: o.auth,
    reject: o.rejectUnauthorized ?? true,
    servername: o.servername,
  };
}

describe('loadKubeAccess reads the simple kubeconfigs itself, the same way client-node does', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plugflow-kube-access-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['a token and inline CA', { server: 'https://api.example:6443', 'certificate-authority-data': b64('CA-PEM') }, { token: 'tok-123' }],
    [
      'an inline client certificate',
      { server: 'https://api.example:6443', 'certificate-authority-data': b64('CA-PEM'), 'tls-server-name': 'kubernetes' },
      { 'client-certificate-data': b64('CERT-PEM'), 'client-key-data': b64('KEY-PEM') },
    ],
    [
      'files relative to the kubeconfig',
      { server: 'https://api.example:6443', 'certificate-authority': 'pki/ca.crt' },
      { 'client-certificate': 'pki/ca.crt', 'client-key': 'pki/token' },
    ],
    [
      'basic auth without TLS verification',
      { server: 'https://api.example:6443', 'insecure-skip-tls-verify': true },
      { username: 'ada', password: 'pw' },
    ],
  ];
  for (const [what, cluster, user] of cases) {
    it(`${what}: same server, CA, client certificate and Authorization as client-node`, async () => {
      mkdirSync(join(dir, 'pki'));
      writeFileSync(join(dir, 'pki', 'ca.crt'), 'CA-FILE');
      writeFileSync(join(dir, 'pki', 'token'), 'file-token\n');
      const file = join(dir, 'config');
      writeFileSync(file, kubeconfig(cluster, user));
      const ours = readSimpleAccess(file, undefined, {});
      expect(ours, 'read without client-node').toBeDefined();
      const theirs = new KubeConfig();
      theirs.loadFromFile(file);
      expect(ours!.getCurrentCluster()!.server).toBe(theirs.getCurrentCluster()!.server);
      expect(await applied(ours!)).toEqual(await applied(theirs));
    });
  }

  // kubectl's field is `tokenFile`; client-node reads only a `token-file` of its own (left to it).
  it("reads kubectl's tokenFile, relative to the kubeconfig, again on every call (rotated tokens)", async () => {
    const file = join(dir, 'config');
    writeFileSync(join(dir, 'token'), 'first');
    writeFileSync(file, kubeconfig({ server: 'https://api.example:6443' }, { tokenFile: 'token' }));
    expect(readSimpleAccess(file, undefined, { KUBECONFIG: '' }, dir), 'read without client-node').toBeDefined();
    const access = readSimpleAccess(file, undefined, {})!;
    expect((await applied(access)).auth).toBe('Bearer first');
    writeFileSync(join(dir, 'token'), 'second');
    expect((await applied(access)).auth).toBe('Bearer second');
  });

  it('follows --context, and $KUBECONFIG when no file is named', async () => {
    const file = join(dir, 'config');
    writeFileSync(file, kubeconfig({ server: 'https://api.example:6443' }, { token: 't' }));
    expect(readSimpleAccess(file, 'other', {})!.getCurrentCluster()!.server).toBe('https://other.example:6443');
    expect((await applied(readSimpleAccess(file, 'other', {})!)).reject).toBe(false);
    expect(readSimpleAccess(undefined, undefined, { KUBECONFIG: file }, dir)!.getCurrentCluster()!.server).toBe('https://api.example:6443');
  });

  it('leaves to client-node what it does not read: exec plugins, auth providers, proxies, unknown fields, several files, unknown contexts', async () => {
    const file = join(dir, 'config');
    const tryUser = (user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://api.example:6443' }) => {
      writeFileSync(file, kubeconfig(cluster, user));
      return readSimpleAccess(file, undefined, {});
    };
    expect(tryUser({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'get-token' } })).toBeUndefined();
    expect(tryUser({ 'auth-provider': { name: 'oidc' } })).toBeUndefined();
    expect(tryUser({ as: 'someone-else', token: 't' })).toBeUndefined();
    expect(tryUser({ token: 't' }, { server: 'https://api.example:6443', 'proxy-url': 'http://proxy:3128' })).toBeUndefined();
    expect(readSimpleAccess(file, 'no-such-context', {})).toBeUndefined();
    expect(readSimpleAccess(undefined, undefined, { KUBECONFIG: `${file}:${file}` }, dir)).toBeUndefined();
    // …and then loadKubeAccess gives client-node's KubeConfig, which knows them.
    writeFileSync(file, kubeconfig({ server: 'https://api.example:6443' }, { as: 'someone-else', token: 't' }));
    expect(await loadKubeAccess(file)).toBeInstanceOf(KubeConfig);
  });

  it('without a kubeconfig and outside a pod there is no simple access (client-node then says what is missing)', () => {
    expect(readSimpleAccess(undefined, undefined, {}, dir)).toBeUndefined();
    expect(
      readSimpleAccess(undefined, undefined, { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir),
    ).toBeUndefined();
  });
});
