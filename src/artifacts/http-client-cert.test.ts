import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { generate } from 'selfsigned';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { downloadHttp, uploadHttp } from './http.js';
import type { HttpSource } from './plan-http.js';
import { keyVariables, planArtifacts } from './plan.js';

const servers: Server[] = [];
let serverPem: { cert: string; key: string };
let client: { cert: string; key: string; fingerprint: string };
let before: string | undefined;

beforeAll(async () => {
  // The loopback servers' certificate is self-signed: this test trusts it the blunt way.
  before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const s = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keyType: 'ec', curve: 'P-256' });
  serverPem = { cert: s.cert, key: s.private };
  const c = await generate([{ name: 'commonName', value: 'artifact-client' }], { keyType: 'ec', curve: 'P-256' });
  client = { cert: c.cert, key: c.private, fingerprint: new X509Certificate(c.cert).fingerprint256 };
});
afterAll(() => {
  if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** An https server on the loopback asking for a client certificate; what it was shown, by request. */
async function serve(handler: (path: string, res: ServerResponse) => void): Promise<{ base: string; shown: string[] }> {
  const shown: string[] = [];
  const server = createServer({ ...serverPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerX509Certificate();
    shown.push(peer?.fingerprint256 ?? 'none');
    req.resume();
    req.on('end', () => handler(req.url ?? '/', res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, shown };
}

const env = () => ({ CERT: client.cert, KEY: client.key });
const src = (url: string): HttpSource => ({ url, clientCertEnv: 'CERT', clientKeyEnv: 'KEY' });
const file = () => join(mkdtempSync(join(tmpdir(), 'pf-cc-')), 'f');

describe('http artifacts with a TLS client certificate', () => {
  it("presents the certificate to the artifact's origin, GET and PUT, and not after a redirect to another origin", async () => {
    const cdn = await serve((_p, res) => res.end('from the cdn'));
    const origin = await serve((p, res) =>
      p === '/moved' ? res.writeHead(302, { location: `${cdn.base}/blob` }).end() : res.end('signed'),
    );
    const out = file();
    await downloadHttp(src(`${origin.base}/f`), out, env());
    expect(readFileSync(out, 'utf8')).toBe('signed');
    await downloadHttp(src(`${origin.base}/moved`), out, env());
    expect(readFileSync(out, 'utf8')).toBe('from the cdn');
    const packed = file();
    writeFileSync(packed, 'upload');
    expect((await uploadHttp(src(`${origin.base}/put`), packed, env())).size).toBe(6);
    expect(origin.shown).toEqual([client.fingerprint, client.fingerprint, client.fingerprint]);
    expect(cdn.shown).toEqual(['none']);
  });

  it('names the field of a missing or malformed certificate, never its contents', async () => {
    await expect(downloadHttp(src('https://127.0.0.1:1/f'), file(), { CERT: client.cert })).rejects.toThrow(
      'GET https://127.0.0.1:1/f: http.auth.clientCert.clientKeySecret is not available (its Secret key is missing or empty)',
    );
    await expect(downloadHttp(src('https://127.0.0.1:1/f'), file(), { CERT: 'not a pem', KEY: 'secret-key-text' })).rejects.toThrow(
      /^GET https:\/\/127\.0\.0\.1:1\/f: http\.auth\.clientCert does not hold a PEM certificate and its private key$/,
    );
  });

  it('is planned as two Secret-backed variables, and refused together with oauth2', () => {
    const vars = keyVariables({ name: 'w', namespace: 'n', uid: 'u' }, 'p');
    const clientCert = {
      clientCertSecret: { name: 'cert-sec', key: 'certificate.pem' },
      clientKeySecret: { name: 'cert-sec', key: 'key.pem' },
    };
    const plan = planArtifacts(
      { name: 't', outputs: { artifacts: [{ name: 'o', path: '/o', http: { url: 'https://x/f?op=CREATE', auth: { clientCert } } }] } },
      undefined,
      vars,
    );
    expect(plan.outputs[0]!.http).toEqual({
      url: 'https://x/f?op=CREATE',
      clientCertEnv: 'PLUGFLOW_SECRET_0',
      clientKeyEnv: 'PLUGFLOW_SECRET_1',
    });
    const oauth2 = {
      clientIDSecret: { name: 'o', key: 'i' },
      clientSecretSecret: { name: 'o', key: 's' },
      tokenURLSecret: { name: 'o', key: 't' },
    };
    expect(() =>
      planArtifacts(
        { name: 't', inputs: { artifacts: [{ name: 'i', path: '/i', http: { url: 'https://x/f', auth: { clientCert, oauth2 } } }] } },
        undefined,
        vars,
      ),
    ).toThrow('template "t": inputs.artifacts[i].http.auth.clientCert and http.auth.oauth2 are both set; keep one');
  });
});
