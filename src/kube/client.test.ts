/**
 * The client's own decisions, against a real HTTP server on a local socket: which Authorization
 * header each identity sends, how replies become ApiErrors, what counts as transient, that one
 * caller's token is never used for another caller or for the client's own calls, and how watch
 * streams are read.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, OWN_IDENTITY, type WatchEvent } from './client.js';
import { ApiError, isAlreadyExists, isConflict, isGone, isNotFound, isTransient } from './errors.js';
import { PODS, SELF_SUBJECT_ACCESS_REVIEWS, WORKFLOWS } from './resource.js';
import {
  OWN_TOKEN,
  startApiStandIn,
  statusReply,
  type ApiStandIn,
  type StandInReply,
  type StandInRequest,
} from './testing/api-stand-in.js';

let api: ApiStandIn;
/** What the stand-in answers; the default echoes the caller's token. */
let reply: (req: StandInRequest, res: ServerResponse) => StandInReply | undefined = (req) => ({ body: { token: req.token ?? null } });

beforeAll(async () => {
  api = await startApiStandIn((req, res) => reply(req, res), { timeoutMs: 500 });
});
afterAll(() => api.close());

function answering(r: typeof reply): void {
  reply = r;
}

describe('identity', () => {
  it("sends the kubeconfig's token for its own calls and a caller's token for that caller's calls", async () => {
    answering((req) => ({ body: { token: req.token ?? null } }));
    expect(await api.client.get(WORKFLOWS, 'ns', 'a')).toEqual({ token: OWN_TOKEN });
    expect(await api.client.as({ kind: 'token', token: 'alice' }).get(WORKFLOWS, 'ns', 'a')).toEqual({ token: 'alice' });
    // Back to the own identity from a caller's view: the kubeconfig's token again.
    expect(await api.client.as({ kind: 'token', token: 'alice' }).as(OWN_IDENTITY).get(WORKFLOWS, 'ns', 'a')).toEqual({ token: OWN_TOKEN });
    expect(api.client.as(OWN_IDENTITY)).toBe(api.client);
  });

  it('impersonates a service account with its own credentials, and only in that view', async () => {
    answering((req) => ({ body: { token: req.token ?? null, as: req.headers['impersonate-user'] ?? null } }));
    const sa = api.client.as({ kind: 'serviceAccount', namespace: 'team', name: 'builder' });
    expect(await sa.get(WORKFLOWS, 'ns', 'a')).toEqual({ token: OWN_TOKEN, as: 'system:serviceaccount:team:builder' });
    expect(await api.client.get(WORKFLOWS, 'ns', 'a')).toEqual({ token: OWN_TOKEN, as: null });
    expect(await sa.as(OWN_IDENTITY).get(WORKFLOWS, 'ns', 'a')).toEqual({ token: OWN_TOKEN, as: null });
    expect(() => api.client.as({ kind: 'serviceAccount', namespace: '', name: 'x' })).toThrow(/namespace and a name/);
  });

  it("never uses one caller's token for another caller or for its own calls, however the calls interleave", async () => {
    // Replies arrive out of order, so requests overlap on the shared pools.
    answering(
      (req) => new Promise((r) => setTimeout(() => r({ body: { token: req.token ?? null, path: req.path } }), Math.random() * 20)) as never,
    );
    const callers = Array.from({ length: 20 }, (_, i) => `caller-${i}`);
    const calls = callers.flatMap((token) => [
      api.client
        .as({ kind: 'token', token })
        .get<{ token: string; path: string }>(WORKFLOWS, 'ns', token)
        .then((r) => [token, r] as const),
      api.client.get<{ token: string; path: string }>(WORKFLOWS, 'ns', `own-${token}`).then((r) => [OWN_TOKEN, r] as const),
    ]);
    for (const [sent, got] of await Promise.all(calls)) expect(got.token, got.path).toBe(sent);
    const seen = api.requests.filter((r) => r.path.includes('/workflows/caller-') || r.path.includes('/workflows/own-caller-'));
    expect(seen).toHaveLength(40);
    for (const r of seen) expect(r.token).toBe(r.path.includes('/own-') ? OWN_TOKEN : r.path.split('/').pop());
  });

  it('refuses a caller identity without a token instead of sending the own credentials', () => {
    expect(() => api.client.as({ kind: 'token', token: '' })).toThrow(/non-empty bearer token/);
  });

  it('sends Basic auth of a kubeconfig user for its own calls only, never for a caller', async () => {
    answering((req) => ({ body: { authorization: req.headers.authorization ?? null } }));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'u', username: 'admin', password: 'pw' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const client = await KubeClient.fromKubeConfig(kc);
    try {
      expect(await client.get(WORKFLOWS, 'ns', 'a')).toEqual({ authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` });
      expect(await client.as({ kind: 'token', token: 'bob' }).get(WORKFLOWS, 'ns', 'a')).toEqual({ authorization: 'Bearer bob' });
    } finally {
      await client.close();
    }
  });
});

describe('errors', () => {
  it('turn a Status reply into an ApiError with its code, reason, message and request', async () => {
    answering(() => statusReply(409, 'AlreadyExists', 'workflows.plugflow.io "a" already exists'));
    const err = await api.client
      .as({ kind: 'token', token: 't' })
      .create(WORKFLOWS, 'ns', { metadata: { name: 'a' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'workflows.plugflow.io "a" already exists',
      request: 'POST /apis/plugflow.io/v1alpha1/namespaces/ns/workflows',
    });
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
    expect((err as ApiError).describe()).toBe(
      'POST /apis/plugflow.io/v1alpha1/namespaces/ns/workflows: 409 AlreadyExists: workflows.plugflow.io "a" already exists',
    );
  });

  it('keep a reply that is not a Status as the message, with no reason', async () => {
    answering(() => ({ status: 502, text: 'upstream connect error', contentType: 'text/plain' }));
    const err = (await api.client.get(WORKFLOWS, 'ns', 'a').catch((e: unknown) => e)) as ApiError;
    expect(err).toMatchObject({ code: 502, reason: '', message: 'upstream connect error' });
    expect(isTransient(err)).toBe(true);
  });

  it('make a cut connection, a refused connection and a timeout transport failures (code 0)', async () => {
    answering(() => 'hang-up');
    const cut = (await api.client.get(WORKFLOWS, 'ns', 'a').catch((e: unknown) => e)) as ApiError;
    expect(cut).toMatchObject({ code: 0, reason: '', request: 'GET /apis/plugflow.io/v1alpha1/namespaces/ns/workflows/a' });
    expect(cut.describe()).toMatch(/: transport error: .*other side closed/);

    answering(() => undefined); // never answers
    const slow = (await api.client.get(WORKFLOWS, 'ns', 'a').catch((e: unknown) => e)) as ApiError;
    expect(slow).toMatchObject({ code: 0 });
    expect(slow.message).toMatch(/timeout/i);

    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const nowhere = await KubeClient.fromKubeConfig(kc);
    try {
      const refused = (await nowhere
        .as({ kind: 'token', token: 't' })
        .get(PODS, 'ns', 'p')
        .catch((e: unknown) => e)) as ApiError;
      expect(refused).toMatchObject({ code: 0 });
      expect(refused.message).toMatch(/ECONNREFUSED/);
      expect(isTransient(refused)).toBe(true);
    } finally {
      await nowhere.close();
    }
  });

  it('classify one way: transport, 429 and 5xx are transient; refusals, too-large writes and non-API errors are not', () => {
    const e = (code: number, reason = '', message = 'x') => new ApiError(code, reason, message, 'GET /x');
    for (const t of [e(0), e(429), e(500), e(503), e(504)]) expect(isTransient(t), String(t.code)).toBe(true);
    for (const f of [
      e(400),
      e(401),
      e(403),
      e(404),
      e(409, 'Conflict'),
      e(410, 'Expired'),
      e(413),
      e(500, '', 'etcdserver: request is too large'),
    ]) {
      expect(isTransient(f), `${f.code} ${f.message}`).toBe(false);
    }
    for (const notApi of [
      new Error('boom'),
      new TypeError('x'),
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      undefined,
    ]) {
      expect(isTransient(notApi)).toBe(false);
    }
    expect(isNotFound(e(404))).toBe(true);
    expect(isGone(e(410, 'Expired'))).toBe(true);
    expect(isConflict(e(409, 'Conflict'))).toBe(true);
  });
});

describe('requests', () => {
  it('send dry runs, server-side applies and merge patches as the API server expects them', async () => {
    answering((req) => ({
      body: { method: req.method, query: Object.fromEntries(req.query), type: req.headers['content-type'] ?? null, body: req.body ?? null },
    }));
    expect(await api.client.create(WORKFLOWS, 'ns', { a: 1 }, { dryRun: true })).toEqual({
      method: 'POST',
      query: { dryRun: 'All' },
      type: 'application/json',
      body: { a: 1 },
    });
    expect(await api.client.create(WORKFLOWS, 'ns', { a: 1 })).toMatchObject({ query: {} });
    expect(await api.client.apply(WORKFLOWS, 'ns', 'w', { kind: 'Workflow' }, { fieldManager: 'plugflow', force: true })).toEqual({
      method: 'PATCH',
      query: { fieldManager: 'plugflow', force: 'true' },
      type: 'application/apply-patch+yaml',
      body: { kind: 'Workflow' },
    });
    expect(await api.client.mergePatch(WORKFLOWS, 'ns', 'w', { spec: { suspend: null } })).toMatchObject({
      type: 'application/merge-patch+json',
      body: { spec: { suspend: null } },
    });
    expect(await api.client.create(WORKFLOWS, 'ns', {}, { fieldValidation: 'Strict' })).toMatchObject({
      query: { fieldValidation: 'Strict' },
    });
    expect(await api.client.patch(WORKFLOWS, 'ns', 'w', [{ op: 'add' }], 'application/json-patch+json', { dryRun: true })).toEqual({
      method: 'PATCH',
      query: { dryRun: 'All' },
      type: 'application/json-patch+json',
      body: [{ op: 'add' }],
    });
    expect(await api.client.create(SELF_SUBJECT_ACCESS_REVIEWS, undefined, {})).toMatchObject({ method: 'POST' });
    expect(api.requests.at(-1)!.path).toBe('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
  });

  it('stream a pod log until it ends, and refuse a missing one before any chunk', async () => {
    answering((req, res) => {
      if (req.path.endsWith('/missing/log')) return statusReply(404, 'NotFound', 'pods "missing" not found');
      expect(Object.fromEntries(req.query)).toEqual({ container: 'main', follow: 'true' });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('line 1\nli');
      setTimeout(() => res.end('ne 2\n'), 20);
      return undefined;
    });
    const chunks: string[] = [];
    for await (const c of await api.client.podLog('ns', 'p', { container: 'main', follow: true })) chunks.push(c.toString());
    expect(chunks.join('')).toBe('line 1\nline 2\n');
    await expect(api.client.podLog('ns', 'missing', {})).rejects.toMatchObject({ code: 404, reason: 'NotFound' });
  });
});

describe('watch', () => {
  it('parses events split across chunks, bookmarks included, and ends when the server closes the stream', async () => {
    answering((req, res) => {
      expect(Object.fromEntries(req.query)).toMatchObject({ watch: '1', resourceVersion: '5', allowWatchBookmarks: 'true' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
      setTimeout(() => {
        res.write('FIED","object":{"metadata":{"name":"a"}}}\n\n{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n');
        res.end();
      }, 10);
      return undefined;
    });
    const events: WatchEvent[] = [];
    let opened = false;
    await api.client.watch(
      WORKFLOWS,
      { namespace: 'ns', resourceVersion: '5', allowWatchBookmarks: true, onOpen: () => (opened = true) },
      (e) => events.push(e),
      new AbortController().signal,
    );
    expect(opened).toBe(true);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'BOOKMARK']);
    expect(events[2].object).toEqual({ metadata: { resourceVersion: '9' } });
  });

  it('rejects a malformed line and a refused watch with ApiErrors, and resolves when aborted', async () => {
    answering((_req, res) => {
      res.writeHead(200);
      res.end('{"type":"ADDED","object":{}}\nnot json\n');
      return undefined;
    });
    const seen: WatchEvent[] = [];
    await expect(api.client.watch(PODS, {}, (e) => seen.push(e), new AbortController().signal)).rejects.toMatchObject({
      code: 0,
      message: expect.stringMatching(/^malformed watch line: not json/),
    });
    expect(seen).toHaveLength(1);

    answering(() => statusReply(410, 'Expired', 'too old resource version: 1 (5)'));
    const gone = await api.client.watch(PODS, { resourceVersion: '1' }, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(isGone(gone)).toBe(true);

    answering((_req, res) => {
      res.writeHead(200);
      res.write('{"type":"ADDED","object":{}}\n');
      return undefined; // stays open
    });
    const abort = new AbortController();
    const done = api.client.watch(PODS, {}, () => abort.abort(), abort.signal);
    await expect(done).resolves.toBeUndefined();
  });
});

describe('TLS', () => {
  it("presents the kubeconfig's client certificate for its own calls only, never with a caller's token", async () => {
    const { generate } = await import('selfsigned');
    const server = await generate([{ name: 'commonName', value: 'stand-in' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
    const own = await generate([{ name: 'commonName', value: 'plugflow-own' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
    const { createServer } = await import('node:https');
    const https = createServer({ cert: server.cert, key: server.private, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ cert: peer?.subject?.CN ?? null, authorization: req.headers.authorization ?? null }));
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    const port = (https.address() as AddressInfo).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', certData: Buffer.from(own.cert).toString('base64'), keyData: Buffer.from(own.private).toString('base64') }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const client = await KubeClient.fromKubeConfig(kc);
    try {
      const calls = await Promise.all([
        client.get(PODS, 'ns', 'a'),
        client.as({ kind: 'token', token: 'carol' }).get(PODS, 'ns', 'a'),
        client.get(PODS, 'ns', 'b'),
        client.as({ kind: 'token', token: 'dave' }).get(PODS, 'ns', 'b'),
      ]);
      expect(calls).toEqual([
        { cert: 'plugflow-own', authorization: null },
        { cert: null, authorization: 'Bearer carol' },
        { cert: 'plugflow-own', authorization: null },
        { cert: null, authorization: 'Bearer dave' },
      ]);
    } finally {
      await client.close();
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    }
  });
});
