/**
 * The http template executor against real HTTP and HTTPS servers on 127.0.0.1, with the real
 * expression language for successCondition.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HTTP } from '../api/index.js';
import { generateSelfSigned } from '../tls/tls-material.js';
import { evaluateSuccessCondition } from './condition.js';
import { canonicalHeaderName, HttpExecutor } from './http-template.js';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function listen(server: Server): Promise<number> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

describe('http template', () => {
  const seen: Seen[] = [];
  let server: Server;
  let tls: Server;
  let base: string;
  let tlsBase: string;
  const secrets = new Map([['ns/api/token', 'Bearer from-secret']]);
  const exec = new HttpExecutor({
    namespace: 'ns',
    evaluate: evaluateSuccessCondition,
    readSecret: async (ns, name, key) => {
      const v = secrets.get(`${ns}/${name}/${key}`);
      if (v === undefined) throw new Error(`secrets "${name}" not found`);
      return v;
    },
  });

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const path = req.url ?? '';
      if (path.startsWith('/status/')) {
        res.writeHead(Number(path.slice(8)), { 'content-type': 'text/plain', 'x-trace': 'abc' });
        return res.end(`status ${path.slice(8)}`);
      }
      if (path === '/slow') return setTimeout(() => res.end('late'), 3000).unref();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, got: body }));
    });
  };

  beforeAll(async () => {
    server = createServer(handler);
    base = `http://127.0.0.1:${await listen(server)}`;
    const pem = await generateSelfSigned();
    tls = createTlsServer({ cert: pem.cert, key: pem.key }, handler);
    tlsBase = `https://127.0.0.1:${await listen(tls)}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    tls.closeAllConnections();
    await new Promise((r) => server.close(r));
    await new Promise((r) => tls.close(r));
    await exec.close();
  });

  const run = (http: Partial<HTTP> & { url: string }) => exec.execute({ name: 't', http: http as HTTP });

  it('GET by default; 2xx succeeds with the body as outputs.result', async () => {
    const r = await run({ url: `${base}/hello?x=1` });
    expect(r).toEqual({ phase: 'Succeeded', outputs: { result: '{"ok":true,"got":""}' } });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/hello?x=1' });
  });

  it('non-2xx without a condition fails "received non-2xx response code: N"', async () => {
    expect(await run({ url: `${base}/status/404` })).toEqual({
      phase: 'Failed',
      message: 'received non-2xx response code: 404',
      outputs: { result: 'status 404' },
    });
  });

  it('sends the method, body and headers, from values and from a secret', async () => {
    const r = await run({
      url: `${base}/post`,
      method: 'put',
      body: '{"a":1}',
      headers: [
        { name: 'content-type', value: 'application/json' },
        { name: 'Authorization', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
      ],
    });
    expect(r.phase).toBe('Succeeded');
    const req = seen.at(-1)!;
    expect(req.method).toBe('PUT');
    expect(req.body).toBe('{"a":1}');
    expect(req.headers.authorization).toBe('Bearer from-secret');
    expect(req.headers['content-type']).toBe('application/json');
  });

  it('takes the body from bodyFrom.bytes (base64)', async () => {
    await run({ url: `${base}/post`, method: 'POST', bodyFrom: { bytes: Buffer.from('raw bytes').toString('base64') } });
    expect(seen.at(-1)!.body).toBe('raw bytes');
  });

  it('fails with the secret named when a header secret cannot be read', async () => {
    const r = await run({ url: `${base}/x`, headers: [{ name: 'X-Key', valueFrom: { secretKeyRef: { name: 'missing', key: 'k' } } }] });
    expect(r).toEqual({
      phase: 'Failed',
      message: 'http.headers[0] (X-Key): cannot read key k of secret ns/missing: secrets "missing" not found',
    });
  });

  it('successCondition decides over request and response, headers in canonical form', async () => {
    const ok = await run({
      url: `${base}/status/404`,
      method: 'DELETE',
      headers: [{ name: 'x-request-id', value: 'r1' }],
      successCondition:
        'response.statusCode == 404 && response.body == "status 404" && response.headers["X-Trace"] == ["abc"] && request.method == "DELETE" && request.headers["X-Request-Id"][0] == "r1" && request.url endsWith "/status/404"',
    });
    expect(ok).toEqual({ phase: 'Succeeded', outputs: { result: 'status 404' } });
    const no = await run({ url: `${base}/hello`, successCondition: 'response.statusCode == 201' });
    expect(no).toMatchObject({
      phase: 'Failed',
      message: 'http.successCondition "response.statusCode == 201" is false (response code 200)',
    });
  });

  it('a successCondition that cannot be evaluated fails the node with the reason', async () => {
    const r = await run({ url: `${base}/hello`, successCondition: 'response.statusCode ==' });
    expect(r.phase).toBe('Failed');
    expect(r.message).toMatch(/^http.successCondition "response.statusCode ==" failed: /);
    const notBool = await run({ url: `${base}/hello`, successCondition: 'response.statusCode' });
    expect(notBool.message).toContain('must yield true or false');
  });

  it('honours timeoutSeconds', async () => {
    const t0 = Date.now();
    const r = await run({ url: `${base}/slow`, timeoutSeconds: 1 });
    expect(r).toEqual({ phase: 'Failed', message: `http request to ${base}/slow timed out after 1s` });
    expect(Date.now() - t0).toBeLessThan(2900);
  });

  it('verifies TLS unless insecureSkipVerify', async () => {
    const strict = await run({ url: `${tlsBase}/hello` });
    expect(strict.phase).toBe('Failed');
    expect(strict.message).toMatch(new RegExp(`^http request to ${tlsBase}/hello failed: .*(self.signed|certificate)`, 'i'));
    expect(await run({ url: `${tlsBase}/hello`, insecureSkipVerify: true })).toMatchObject({ phase: 'Succeeded' });
  });

  it('refuses a bad URL, a bad method and two bodies', async () => {
    expect((await run({ url: 'not a url' })).message).toBe('http.url "not a url" is not a valid URL');
    expect((await run({ url: 'ftp://x/y' })).message).toBe('http.url "ftp://x/y" must use http or https');
    expect((await run({ url: `${base}/x`, method: 'GE T' })).message).toBe('http.method "GE T" is not an HTTP method');
    expect((await run({ url: `${base}/x`, body: 'a', bodyFrom: { bytes: 'Yg==' } })).message).toBe(
      'http.body and http.bodyFrom are both set; use one',
    );
  });

  it('reports connection failures', async () => {
    const dead = createServer();
    const port = await listen(dead);
    await new Promise((r) => dead.close(r));
    const r = await run({ url: `http://127.0.0.1:${port}/` });
    expect(r.message).toMatch(/^http request to http:\/\/127.0.0.1:\d+\/ failed: connect ECONNREFUSED/);
  });

  it('canonicalises header names as Go does', () => {
    expect(canonicalHeaderName('content-type')).toBe('Content-Type');
    expect(canonicalHeaderName('X-REQUEST-ID')).toBe('X-Request-Id');
  });
});
