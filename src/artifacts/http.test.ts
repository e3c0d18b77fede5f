import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadHttp, HttpArtifactError, MAX_REDIRECTS, redirectTarget } from './http.js';

/** A real server on the loopback; its base URL and the headers of every request it was sent. */
async function serve(handler: RequestListener): Promise<{ base: string; seen: Array<{ url: string; headers: IncomingHttpHeaders }> }> {
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const file = () => join(mkdtempSync(join(tmpdir(), 'plugflow-http-')), 'fetched');
const env = { USER_ENV: 'alice', PASS_ENV: 's3cret' };
const basic = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;
const source = (url: string) => ({
  url,
  headers: [{ name: 'X-Api-Token', value: 'tok-123' }],
  usernameEnv: 'USER_ENV',
  passwordEnv: 'PASS_ENV',
});

const redirectTo =
  (location: string, status = 302): RequestListener =>
  (_req, res) => {
    res.writeHead(status, { location });
    res.end();
  };
const body =
  (text: string): RequestListener =>
  (_req, res) =>
    res.end(text);

describe('downloading an http artifact', () => {
  it('keeps the declared headers and basic auth across a redirect to the same origin', async () => {
    const a = await serve((req, res) => (req.url === '/start' ? redirectTo('/file?sig=1', 301)(req, res) : body('payload')(req, res)));
    const out = file();
    await downloadHttp(source(`${a.base}/start`), out, env);
    expect(readFileSync(out, 'utf8')).toBe('payload');
    expect(a.seen.map((r) => r.url)).toEqual(['/start', '/file?sig=1']);
    for (const r of a.seen) {
      expect(r.headers['x-api-token']).toBe('tok-123');
      expect(r.headers.authorization).toBe(basic);
    }
  });

  it('drops the declared headers and basic auth on a redirect to another origin, and still downloads', async () => {
    const b = await serve(body('from b'));
    const a = await serve(redirectTo(`${b.base}/blob`, 307));
    const out = file();
    await downloadHttp(source(`${a.base}/start`), out, env);
    expect(readFileSync(out, 'utf8')).toBe('from b');
    expect(a.seen[0].headers['x-api-token']).toBe('tok-123');
    expect(b.seen).toHaveLength(1);
    expect(b.seen[0].headers['x-api-token']).toBeUndefined();
    expect(b.seen[0].headers.authorization).toBeUndefined();
  });

  it(`follows ${MAX_REDIRECTS} redirects and refuses one more`, async () => {
    const a = await serve((req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      if (n < 10) redirectTo(`/${n + 1}`)(req, res);
      else body('end')(req, res);
    });
    const out = file();
    await downloadHttp({ url: `${a.base}/5` }, out);
    expect(readFileSync(out, 'utf8')).toBe('end');
    await expect(downloadHttp({ url: `${a.base}/4?token=abc` }, file())).rejects.toThrow(
      new RegExp(`^GET ${a.base}/4\\?…: more than 5 redirects \\(still redirected at ${a.base}/9\\); point the artifact at the final URL$`),
    );
  });

  it('fails on an answer other than 2xx, naming the URL without its query string or credentials', async () => {
    const a = await serve((_req, res) => {
      res.writeHead(404);
      res.end('no');
    });
    const err = await downloadHttp(
      { url: `${a.base}/missing?token=abc`, usernameEnv: 'USER_ENV', passwordEnv: 'PASS_ENV' },
      file(),
      env,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpArtifactError);
    expect((err as Error).message).toBe(`GET ${a.base}/missing?…: the server answered HTTP 404`);
  });

  it('names the hop that failed after a redirect', async () => {
    const a = await serve((req, res) => (req.url === '/start' ? redirectTo('/gone?x=secret')(req, res) : res.writeHead(500).end()));
    await expect(downloadHttp({ url: `${a.base}/start` }, file())).rejects.toThrow(
      `GET ${a.base}/start (redirected to ${a.base}/gone?…): the server answered HTTP 500`,
    );
  });

  it('refuses a redirect to a scheme other than http(s) and one without a Location', async () => {
    const a = await serve((req, res) => (req.url === '/ftp' ? redirectTo('ftp://example.com/f')(req, res) : res.writeHead(302).end()));
    await expect(downloadHttp({ url: `${a.base}/ftp` }, file())).rejects.toThrow(
      /refusing the redirect from .*: it leads to a "ftp" URL; only http and https/,
    );
    await expect(downloadHttp({ url: `${a.base}/none` }, file())).rejects.toThrow(/the answer has no Location header/);
  });

  it('refuses a URL carrying credentials without repeating them', async () => {
    await expect(downloadHttp({ url: 'http://bob:hunter2@127.0.0.1:1/x' }, file())).rejects.toThrow(
      /^GET http:\/\/127\.0\.0\.1:1\/x: the URL carries credentials; give them with auth\.basicAuth/,
    );
  });
});

describe('where a redirect may lead', () => {
  const from = new URL('https://artifacts.example.com/a/b?token=t');

  it('resolves a relative Location against the current URL', () => {
    expect(redirectTarget(from, '../c', 'x').href).toBe('https://artifacts.example.com/c');
    expect(redirectTarget(from, 'https://cdn.example.net/o', 'x').href).toBe('https://cdn.example.net/o');
  });

  it('refuses a downgrade from https to plain http, saying so, without the query string', () => {
    expect(() => redirectTarget(from, 'http://cdn.example.net/o?sig=s', 'GET-ME')).toThrow(
      'GET GET-ME: refusing the redirect from https://artifacts.example.com/a/b?…: it downgrades https to plain http (http://cdn.example.net/o?…)',
    );
  });

  it('refuses other schemes and credentials in the Location', () => {
    expect(() => redirectTarget(from, 'file:///etc/passwd', 'x')).toThrow(/"file" URL; only http and https are followed/);
    expect(() => redirectTarget(from, 'https://u:p@cdn.example.net/o', 'x')).toThrow(
      /carries credentials \(https:\/\/cdn\.example\.net\/o\)/,
    );
  });
});
