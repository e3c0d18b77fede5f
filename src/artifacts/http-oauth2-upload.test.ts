import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadHttp, uploadHttp } from './http.js';
import type { HttpSource } from './plan-http.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real server on the loopback that reads each request's body before answering. */
async function serve(handler: Handler): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const tmp = () => mkdtempSync(join(tmpdir(), 'plugflow-http2-'));
const json = (res: ServerResponse, status: number, data: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(data));
};
const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** A token endpoint that hands out `token` to client app-1 / s3cret-value, by basic auth or form. */
function tokenEndpoint(token: string, opts: { basic?: boolean } = {}): Handler {
  return (req, res, body) => {
    const form = new URLSearchParams(body);
    const byHeader = req.headers.authorization === basicOf('app-1', 's3cret-value');
    const byForm = form.get('client_id') === 'app-1' && form.get('client_secret') === 's3cret-value';
    if (form.get('grant_type') !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type' });
    if (opts.basic === false ? !byForm : !byHeader && !byForm) return json(res, 401, { error: 'invalid_client' });
    json(res, 200, { access_token: token, token_type: 'bearer', expires_in: 3600 });
  };
}

const oauthEnv = (tokenUrl: string) => ({ ID: 'app-1', SECRET: 's3cret-value', TOKEN_URL: tokenUrl });
const withOAuth2 = (url: string, extra: Partial<HttpSource> = {}): HttpSource => ({
  url,
  headers: [{ name: 'X-Custom', value: 'v1' }],
  oauth2: {
    clientIdEnv: 'ID',
    clientSecretEnv: 'SECRET',
    tokenUrlEnv: 'TOKEN_URL',
    scopes: ['read', 'write'],
    endpointParams: [{ key: 'resource', value: 'files' }],
  },
  ...extra,
});

describe('http artifacts with OAuth2 (client credentials)', () => {
  it('gets a token with a form POST and downloads with Authorization: Bearer', async () => {
    const auth = await serve(tokenEndpoint('tok-AAA'));
    const files = await serve((req, res) =>
      req.headers.authorization === 'Bearer tok-AAA' ? res.end('the file') : res.writeHead(401).end(),
    );
    const out = join(tmp(), 'f');
    await downloadHttp(withOAuth2(`${files.base}/data.txt?op=OPEN`), out, oauthEnv(`${auth.base}/oauth/token`));
    expect(readFileSync(out, 'utf8')).toBe('the file');
    expect(auth.seen).toHaveLength(1);
    const req = auth.seen[0];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/oauth/token');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req.headers.authorization).toBe(basicOf('app-1', 's3cret-value'));
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'read write',
      resource: 'files',
    });
    expect(files.seen[0].headers['x-custom']).toBe('v1');
  });

  it('sends the client credentials in the form when the endpoint refuses basic auth', async () => {
    const auth = await serve(tokenEndpoint('tok-BBB', { basic: false }));
    const files = await serve((req, res) => (req.headers.authorization === 'Bearer tok-BBB' ? res.end('ok') : res.writeHead(401).end()));
    const out = join(tmp(), 'f');
    await downloadHttp(withOAuth2(`${files.base}/x`), out, oauthEnv(`${auth.base}/token`));
    expect(readFileSync(out, 'utf8')).toBe('ok');
    expect(auth.seen).toHaveLength(2);
    expect(auth.seen[1].headers.authorization).toBeUndefined();
    expect(new URLSearchParams(auth.seen[1].body).get('client_id')).toBe('app-1');
  });

  it('sends the token only to the artifact origin, not after a redirect to another one', async () => {
    const auth = await serve(tokenEndpoint('tok-CCC'));
    const cdn = await serve((_req, res) => res.end('from the cdn'));
    const files = await serve((_req, res) => res.writeHead(307, { location: `${cdn.base}/blob` }).end());
    const out = join(tmp(), 'f');
    await downloadHttp(withOAuth2(`${files.base}/x`), out, oauthEnv(`${auth.base}/token`));
    expect(readFileSync(out, 'utf8')).toBe('from the cdn');
    expect(files.seen[0].headers.authorization).toBe('Bearer tok-CCC');
    expect(cdn.seen[0].headers.authorization).toBeUndefined();
    expect(cdn.seen[0].headers['x-custom']).toBeUndefined();
  });

  it('fails naming the status and OAuth2 error, never the secret, the token or the token URL', async () => {
    const auth = await serve((_req, res) => json(res, 401, { error: 'invalid_client', error_description: 'bad s3cret-value' }));
    const tokenUrl = `${auth.base}/private-token-path?key=abc`;
    const err = (await downloadHttp(withOAuth2('http://127.0.0.1:1/x'), join(tmp(), 'f'), oauthEnv(tokenUrl)).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toBe('GET http://127.0.0.1:1/x: the OAuth2 token endpoint (tokenURLSecret) answered HTTP 401 (invalid_client)');
    expect(err.message).not.toMatch(/s3cret|private-token-path|app-1/);
  });

  it('names the missing Secret field, and an unreachable endpoint without its address', async () => {
    await expect(downloadHttp(withOAuth2('http://127.0.0.1:1/x'), join(tmp(), 'f'), { ID: 'app-1', SECRET: '' })).rejects.toThrow(
      'GET http://127.0.0.1:1/x: http.auth.oauth2.clientSecretSecret is not available (its Secret key is missing or empty)',
    );
    const closed = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const err = (await downloadHttp(withOAuth2('http://127.0.0.1:1/x'), join(tmp(), 'f'), oauthEnv(`${closed.base}/t`)).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toBe('GET http://127.0.0.1:1/x: the OAuth2 token request (tokenURLSecret) failed: ECONNREFUSED');
  });

  it('does not follow a redirect of the token endpoint', async () => {
    const elsewhere = await serve(tokenEndpoint('tok-DDD'));
    const auth = await serve((_req, res) => res.writeHead(307, { location: `${elsewhere.base}/token` }).end());
    await expect(downloadHttp(withOAuth2('http://127.0.0.1:1/x'), join(tmp(), 'f'), oauthEnv(`${auth.base}/t`))).rejects.toThrow(
      /token endpoint \(tokenURLSecret\) answered with a redirect \(HTTP 307\); give its final URL/,
    );
    expect(elsewhere.seen).toHaveLength(0);
  });
});

describe('uploading an http output artifact (PUT)', () => {
  const file = (text: string) => {
    const f = join(tmp(), 'packed');
    writeFileSync(f, text);
    return f;
  };
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('PUTs the file with the declared headers and basic auth; its size and sha256', async () => {
    const store = await serve((_req, res) => res.writeHead(201).end());
    const src: HttpSource = {
      url: `${store.base}/webhdfs/v1/f.tgz?op=CREATE&overwrite=true`,
      headers: [{ name: 'X-Custom', value: 'v' }],
      usernameEnv: 'U',
      passwordEnv: 'P',
    };
    const got = await uploadHttp(src, file('payload-1'), { U: 'alice', P: 'pw' });
    expect(got).toEqual({ size: 9, sha256: sha('payload-1') });
    expect(store.seen).toHaveLength(1);
    expect(store.seen[0]).toMatchObject({ method: 'PUT', url: '/webhdfs/v1/f.tgz?op=CREATE&overwrite=true', body: 'payload-1' });
    expect(store.seen[0].headers['content-length']).toBe('9');
    expect(store.seen[0].headers['x-custom']).toBe('v');
    expect(store.seen[0].headers.authorization).toBe(basicOf('alice', 'pw'));
  });

  it('follows a 307 to another origin (a webHDFS data node), sending the file again without the credentials', async () => {
    const datanode = await serve((_req, res) => res.writeHead(201).end());
    const namenode = await serve((req, res) =>
      res.writeHead(307, { location: `${datanode.base}/webhdfs/v1/f?op=CREATE&namenoderpcaddress=nn` }).end(),
    );
    const text = 'x'.repeat(200_000);
    const got = await uploadHttp(withOAuth2(`${namenode.base}/webhdfs/v1/f?op=CREATE&overwrite=true`), file(text), {
      ...oauthEnv(`${(await serve(tokenEndpoint('tok-PUT'))).base}/token`),
    });
    expect(got.size).toBe(200_000);
    expect(namenode.seen[0].headers.authorization).toBe('Bearer tok-PUT');
    expect(namenode.seen[0].headers['x-custom']).toBe('v1');
    expect(datanode.seen).toHaveLength(1);
    expect(datanode.seen[0].method).toBe('PUT');
    expect(datanode.seen[0].body).toBe(text);
    expect(datanode.seen[0].headers.authorization).toBeUndefined();
    expect(datanode.seen[0].headers['x-custom']).toBeUndefined();
  });

  it('keeps the credentials on a 308 to the same origin', async () => {
    const store = await serve((req, res) => (req.url === '/a' ? res.writeHead(308, { location: '/b' }).end() : res.writeHead(200).end()));
    await uploadHttp({ url: `${store.base}/a`, usernameEnv: 'U', passwordEnv: 'P' }, file('abc'), { U: 'u', P: 'p' });
    expect(store.seen.map((r) => [r.url, r.body, r.headers.authorization])).toEqual([
      ['/a', 'abc', basicOf('u', 'p')],
      ['/b', 'abc', basicOf('u', 'p')],
    ]);
  });

  it('refuses a 302 (it would turn the PUT into a GET) and fails on an error status', async () => {
    const store = await serve((req, res) =>
      req.url?.startsWith('/moved') ? res.writeHead(302, { location: '/x' }).end() : res.writeHead(403).end(),
    );
    await expect(uploadHttp({ url: `${store.base}/moved?sig=secret` }, file('a'))).rejects.toThrow(
      `PUT ${store.base}/moved?…: the server redirected the upload with HTTP 302, which turns a PUT into a GET without body; only 307 and 308 are followed`,
    );
    await expect(uploadHttp({ url: `${store.base}/denied` }, file('a'))).rejects.toThrow(
      `PUT ${store.base}/denied: the server answered HTTP 403`,
    );
  });

  it('refuses a redirect from https down to http, and a directory', async () => {
    const d = tmp();
    mkdirSync(join(d, 'dir'));
    await expect(uploadHttp({ url: 'http://127.0.0.1:1/x' }, join(d, 'dir'))).rejects.toThrow(
      /an http output is uploaded as one file; archive a directory \(tar, the default\)/,
    );
    const { redirectTarget } = await import('./http.js');
    expect(() => redirectTarget(new URL('https://nn.example.com/f'), 'http://dn.example.com/f', 'W', 'PUT')).toThrow(
      'PUT W: refusing the redirect from https://nn.example.com/f: it downgrades https to plain http (http://dn.example.com/f)',
    );
  });
});
