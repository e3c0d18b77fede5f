/**
 * The REST endpoints the web UI needs, against the real API server with RBAC on, each with the
 * caller's rights: the workflow watch stream, a pod's log, what a caller may do, who a token is,
 * the event tester, the executor-plugin inventory, and the UI's own files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { readYamlDocuments } from '../src/yaml/kube-yaml.js';
import { cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import { startE2eStack, type E2eStack } from './support/e2e.js';
import { call, createObject, grantRole, rule, startTestServer, type TestServer } from './support/server.js';
import { connect, type ClientHttp2Stream } from 'node:http2';
import { openSse } from './support/sse.js';

const wf = (name: string, command: string[]): Workflow =>
  ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Workflow',
    metadata: { name },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'alpine:3.20', command } }] },
  }) as Workflow;

describe('REST for the web UI', () => {
  let stack: E2eStack;
  let ns: string;
  let url: string;
  let admin: string;
  let alice: string; // may list, get, watch, create workflows and read pod logs in ns; not delete
  let bob: string; // no rights

  beforeAll(async () => {
    stack = await startE2eStack({ prefix: 'ui-api', plugins: false });
    ns = stack.namespace;
    url = stack.server!.url;
    admin = cluster().adminToken;
    alice = cluster().userTokens.alice;
    bob = cluster().userTokens.bob;
    await grantRole(ns, 'alice', 'ui-reader', [
      rule('workflows', 'get', 'list', 'watch', 'create'),
      rule('workfloweventbindings', 'list'),
      rule('workflowtemplates', 'get', 'list'),
      { apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get'] },
    ]);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('streams every workflow, then "synced", then each change until it finishes — summaries without spec or nodes', async () => {
    await stack.submit(wf('before', ['echo', 'one']));
    const sse = await openSse(`${url}/api/v1/workflow-events/${ns}?summary=true`, alice);
    try {
      expect(sse.status).toBe(200);
      const first = await sse.next();
      expect(first.data.result).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'before', namespace: ns } } });
      expect(first.data.result.object.spec).toBeUndefined();
      expect(first.data.result.object.status.nodes).toBeUndefined();
      await sse.next((m) => m.event === 'synced');
      await stack.submit(wf('during', ['echo', 'two']));
      const added = await sse.next((m) => m.data.result?.object.metadata.name === 'during');
      expect(added.data.result.type).toBe('ADDED');
      const done = await sse.next(
        (m) => m.data.result?.object.metadata.name === 'during' && m.data.result.object.status.phase === 'Succeeded',
        120_000,
      );
      expect(done.data.result.type).toBe('MODIFIED');
    } finally {
      sse.close();
    }
  });

  it('streams one workflow in full with a field selector', async () => {
    await stack.waitForCompletion('before', 120_000);
    const sse = await openSse(
      `${url}/api/v1/workflow-events/${ns}?listOptions.fieldSelector=${encodeURIComponent('metadata.name=before')}`,
      alice,
    );
    try {
      const m = await sse.next();
      expect(m.data.result.object.metadata.name).toBe('before');
      expect(Object.keys(m.data.result.object.status.nodes)).toHaveLength(1);
      await sse.next((x) => x.event === 'synced');
    } finally {
      sse.close();
    }
  });

  it("refuses a stream the token may not see, before streaming, with the API server's reason", async () => {
    const none = await openSse(`${url}/api/v1/workflow-events/${ns}`, bob);
    expect(none.status).toBe(403);
    expect(JSON.parse(none.text).message).toMatch(/bob.*cannot list/);
    // alice may list in ns only: every namespace at once is refused.
    const all = await openSse(`${url}/api/v1/workflow-events/`, alice);
    expect(all.status).toBe(403);
    const list = await call('GET', `${url}/api/v1/workflows/?summary=true`, { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.items.some((w: Workflow) => w.metadata.namespace === ns && w.metadata.name === 'before')).toBe(true);
  });

  it("streams a pod's log line by line, only for that workflow's pods", async () => {
    await stack.submit(wf('talker', ['sh', '-c', 'echo first line; echo second line']));
    const done = await stack.waitForCompletion('talker', 120_000);
    const pod = Object.values(done.status!.nodes!).find((n) => n.podName)!.podName!;
    const sse = await openSse(`${url}/api/v1/workflows/${ns}/talker/log?podName=${pod}&logOptions.container=main`, alice);
    const lines = (await sse.rest()).map((m) => m.data.result);
    expect(lines).toEqual([
      { content: 'first line', podName: pod },
      { content: 'second line', podName: pod },
    ]);
    const other = await call('GET', `${url}/api/v1/workflows/${ns}/before/log?podName=${pod}`, { token: alice });
    expect(other.status).toBe(404);
    expect(other.body.message).toBe(`pod ${ns}/${pod} is not a pod of workflow before`);
    const refused = await call('GET', `${url}/api/v1/workflows/${ns}/talker/log?podName=${pod}`, { token: bob });
    expect(refused.status).toBe(403);
    // The pod in the path (the peer's PodLogs route), and a grep.
    const inPath = await openSse(`${url}/api/v1/workflows/${ns}/talker/${pod}/log?grep=second`, alice);
    expect((await inPath.rest()).map((m) => m.data.result)).toEqual([{ content: 'second line', podName: pod }]);
    // Without a pod: every pod of the workflow (`argo logs WF`), which needs list on pods.
    const unlisted = await call('GET', `${url}/api/v1/workflows/${ns}/talker/log`, { token: alice });
    expect(unlisted.status).toBe(403);
    await grantRole(ns, 'alice', 'pod-lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    await expect
      .poll(async () => (await call('GET', `${url}/api/v1/workflows/${ns}/talker/log`, { token: alice })).status, { timeout: 10_000 })
      .toBe(200);
    const all = await openSse(`${url}/api/v1/workflows/${ns}/talker/log?logOptions.follow=true`, alice);
    expect((await all.rest()).map((m) => m.data.result)).toEqual([
      { content: 'first line', podName: pod },
      { content: 'second line', podName: pod },
    ]);
  });

  it('streams a log of 8 MiB without a newline as 1 MiB in pieces and a note, not as one line held whole', async () => {
    await stack.submit(wf('no-newlines', ['sh', '-c', "head -c 8388608 /dev/zero | tr '\\0' x"]));
    const done = await stack.waitForCompletion('no-newlines', 120_000);
    expect(done.status?.phase).toBe('Succeeded');
    const pod = Object.values(done.status!.nodes!).find((n) => n.podName)!.podName!;
    const sse = await openSse(`${url}/api/v1/workflows/${ns}/no-newlines/log?podName=${pod}`, alice);
    const contents: string[] = (await sse.rest(60_000)).map((m) => m.data.result.content);
    expect(contents).toHaveLength(17);
    expect(contents.slice(0, 16).every((c) => c.length === 64 * 1024 && /^x+$/.test(c))).toBe(true);
    expect(contents[16]).toBe(
      `[plugflow: this line was longer than ${1024 * 1024} characters; the last ${8 * 1024 * 1024 - 1024 * 1024} were not sent]`,
    );
  });

  it("lists a workflow's Events, oldest first, and refuses a pod of another workflow", async () => {
    await stack.waitForCompletion('talker', 120_000);
    await grantRole(ns, 'alice', 'event-reader', [{ apiGroups: [''], resources: ['events'], verbs: ['list'] }]);
    const events = async () => (await call('GET', `${url}/api/v1/workflows/${ns}/talker/events`, { token: alice })).body.items;
    await expect
      .poll(async () => (await events()).map((e: any) => e.reason).sort(), { timeout: 20_000 })
      .toEqual(['WorkflowRunning', 'WorkflowSucceeded']);
    // Oldest first, as far as Event timestamps tell (whole seconds: a one-step workflow's two may share one).
    const times = (await events()).map((e: any) => Date.parse(e.lastTimestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const talker = await stack.getWorkflow('talker');
    const pod = Object.values(talker.status!.nodes!).find((n) => n.podName)!.podName!;
    const other = await call('GET', `${url}/api/v1/workflows/${ns}/before/events?podName=${pod}`, { token: alice });
    expect(other.status).toBe(404);
    expect((await call('GET', `${url}/api/v1/workflows/${ns}/talker/events`, { token: bob })).status).toBe(403);
  });

  it('says what the caller may do, and why not', async () => {
    const r = await call('GET', `${url}/api/v1/access/${ns}`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.actions.submit).toEqual({ allowed: true });
    expect(r.body.actions.logs).toEqual({ allowed: true });
    expect(r.body.actions.delete).toEqual({
      allowed: false,
      reason: `forbidden: the token may not delete workflows.${GROUP} in namespace "${ns}", so it may not delete workflows there`,
    });
    expect(r.body.actions.retry.reason).toMatch(/may not patch workflows/);
    const everything = await call('GET', `${url}/api/v1/access/${ns}`, { token: admin });
    expect(Object.values(everything.body.actions).every((a: any) => a.allowed)).toBe(true);
  });

  it('says who a token is, and 401 for one the API server rejects', async () => {
    expect((await call('GET', `${url}/api/v1/userinfo`, { token: alice })).body).toMatchObject({ username: 'alice' });
    const bad = await call('GET', `${url}/api/v1/userinfo`, { token: 'not-a-real-token' });
    expect(bad.status).toBe(401);
  });

  it('tests an event against the bindings: which match, what each selector gave, the workflow it would submit — and submits nothing', async () => {
    await createObject(ns, PLURAL.workflowTemplate, {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'WorkflowTemplate',
      metadata: { name: 'greet' },
      spec: {
        entrypoint: 'main',
        arguments: { parameters: [{ name: 'who' }] },
        templates: [{ name: 'main', container: { image: 'alpine:3.20', command: ['echo', '{{workflow.parameters.who}}'] } }],
      },
    });
    const binding = (name: string, selector: string, template = 'greet') => ({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'WorkflowEventBinding',
      metadata: { name },
      spec: {
        event: { selector },
        submit: {
          workflowTemplateRef: { name: template },
          arguments: { parameters: [{ name: 'who', valueFrom: { event: 'payload.who' } }] },
        },
      },
    });
    await createObject(ns, PLURAL.workflowEventBinding, binding('on-push', 'metadata["x-event"][0] == "push" && payload.who != ""'));
    await createObject(ns, PLURAL.workflowEventBinding, binding('on-tag', 'discriminator == "tag"'));
    await createObject(ns, PLURAL.workflowEventBinding, binding('to-nowhere', 'true', 'no-such-template'));
    const before = (await call('GET', `${url}/api/v1/workflows/${ns}`, { token: admin })).body.items.length;

    const r = await call('POST', `${url}/api/v1/workflow-event-bindings/${ns}/test`, {
      token: alice,
      body: { discriminator: 'push', payload: { who: 'Ada' }, headers: { 'X-Event': 'push', Authorization: 'Bearer leaked?' } },
    });
    expect(r.status).toBe(200);
    const [onPush, onTag, nowhere] = r.body.bindings;
    expect(onPush).toMatchObject({ binding: 'on-push', matched: true, problems: [] });
    expect(onPush.workflow.spec).toEqual({
      workflowTemplateRef: { name: 'greet' },
      arguments: { parameters: [{ name: 'who', value: 'Ada' }] },
    });
    expect(onPush.workflow.metadata.name).toMatch(/^greet-\d{14}-[a-z0-9]{6}$/);
    expect(onPush.rejected).toBeUndefined();
    expect(onTag).toMatchObject({ binding: 'on-tag', matched: false, selector: 'discriminator == "tag"' });
    expect(onTag.workflow).toBeUndefined();
    expect(nowhere.matched).toBe(true);
    expect(nowhere.rejected).toMatch(/no-such-template/);
    expect((await call('GET', `${url}/api/v1/workflows/${ns}`, { token: admin })).body.items.length).toBe(before);

    const bad = await call('POST', `${url}/api/v1/workflow-event-bindings/${ns}/test`, { token: alice, body: { headers: {} } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^payload is required/);
    const extra = await call('POST', `${url}/api/v1/workflow-event-bindings/${ns}/test`, {
      token: alice,
      body: { payload: {}, dryRun: false },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toBe('dryRun: not a field of an event test (it takes discriminator, payload, headers)');
    expect((await call('POST', `${url}/api/v1/workflow-event-bindings/${ns}/test`, { token: bob, body: { payload: {} } })).status).toBe(
      403,
    );
  });

  it('serves the UI: the page with a strict CSP, the bundle gzipped, nothing outside it', async () => {
    const page = await call('GET', `${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(page.text).toContain('/ui/app.js');
    const js = await call('GET', `${url}/ui/app.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(js.headers['content-encoding']).toBe('gzip');
    const plain = await call('GET', `${url}/ui/app.js`);
    expect(plain.text.length).toBeGreaterThan(10_000);
    expect(plain.headers.etag).toBeTruthy();
    expect((await call('GET', `${url}/ui/app.js`, { headers: { 'if-none-match': String(plain.headers.etag) } })).status).toBe(304);
    expect((await call('GET', `${url}/ui/..%2Fpackage.json`)).status).toBe(404);
    expect((await call('GET', `${url}/ui/nothing.js`)).status).toBe(404);
  });

  it("speaks HTTP/2 over TLS: a browser's streams and requests share one connection (twenty streams, then a list)", async () => {
    const session = connect(url, { rejectUnauthorized: false });
    try {
      await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
      expect((session.socket as unknown as { alpnProtocol?: string }).alpnProtocol).toBe('h2');
      const open = (path: string, accept: string) =>
        new Promise<{ status: number; body: () => string; stream: ClientHttp2Stream }>((resolve, reject) => {
          const stream = session.request({ ':path': path, accept, authorization: `Bearer ${alice}` });
          let text = '';
          stream.on('data', (c: Buffer) => (text += c.toString()));
          stream.once('response', (h) => resolve({ status: Number(h[':status']), body: () => text, stream }));
          stream.once('error', reject);
        });
      const streams = await Promise.all(
        Array.from({ length: 20 }, () => open(`/api/v1/workflow-events/${ns}?summary=true`, 'text/event-stream')),
      );
      expect(streams.map((x) => x.status)).toEqual(Array(20).fill(200));
      const list = await open(`/api/v1/workflows/${ns}`, 'application/json');
      await new Promise((r) => list.stream.once('end', r));
      expect(list.status).toBe(200);
      expect(JSON.parse(list.body()).items).toBeInstanceOf(Array);
      for (const x of streams) x.stream.close();
    } finally {
      session.close();
    }
  });

  it('a graceful stop ends open event streams at once (HTTP/1 and HTTP/2) instead of waiting until it is killed', async () => {
    const own = await startTestServer({ namespace: ns });
    const h1 = await openSse(`${own.url}/api/v1/workflow-events/${ns}?summary=true`, alice);
    const session = connect(own.url, { rejectUnauthorized: false });
    const h2 = session.request({ ':path': `/api/v1/workflow-events/${ns}?summary=true`, authorization: `Bearer ${alice}` });
    h2.end(); // a GET: the browser ends its side at once
    // (deliberately not read: a client that stops reading must not hold the server)
    const goaway = new Promise((r) => session.once('goaway', () => r('goaway')));
    await new Promise((r) => h2.once('response', r));
    expect(h1.status).toBe(200);
    const t0 = Date.now();
    await own.close();
    const seconds = (Date.now() - t0) / 1000;
    // The HTTP/2 client was told to go away; this one stopped reading, so its connection was cut
    // after the two seconds of grace (the server closed all the same).
    expect(await Promise.race([goaway, new Promise((r) => setTimeout(() => r('no GOAWAY'), 5_000))])).toBe('goaway');
    session.destroy();
    await expect(h1.rest(5_000)).resolves.toBeInstanceOf(Array);
    expect(seconds).toBeLessThan(10); // the rollout would otherwise wait out its grace period (30 s)
  });
});

describe('the executor-plugin inventory', () => {
  let ns: string;
  let install: string;
  let server: TestServer;

  beforeAll(async () => {
    [ns, install] = await Promise.all([createTestNamespace('ui-plugins'), createTestNamespace('ui-install')]);
    server = await startTestServer({ installNamespace: install });
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all([deleteTestNamespace(ns), deleteTestNamespace(install)]);
  });

  it("lists the plugins a namespace's workflows get, and why the others are not used", async () => {
    const [hello] = readYamlDocuments(
      readFileSync(join(REPO_ROOT, 'examples', 'plugins', 'hello', 'hello-executor-plugin-configmap.yaml'), 'utf8'),
      'hello',
    ) as any[];
    const core = (await import('./support/cluster.js')).adminKubeConfig();
    const { CoreV1Api } = await import('@kubernetes/client-node');
    const api = core.makeApiClient(CoreV1Api);
    const put = (namespace: string, body: any) =>
      api.createNamespacedConfigMap({ namespace, body: { ...body, metadata: { ...body.metadata, namespace } } });
    await put(ns, hello);
    await put(install, hello); // shadowed by ns's own
    await put(install, {
      ...hello,
      metadata: { ...hello.metadata, name: 'broken-executor-plugin' },
      data: { 'sidecar.container': 'name: [' },
    });
    const admin = cluster().adminToken;
    const r = await call('GET', `${server.url}/api/v1/executor-plugins/${ns}`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.body.installNamespace).toBe(install);
    const states = r.body.plugins.map((p: any) => [p.namespace, p.configMap, p.state]);
    expect(states).toEqual([
      [install, 'broken-executor-plugin', 'malformed'],
      [ns, 'hello-executor-plugin', 'used'],
      [install, 'hello-executor-plugin', 'shadowed'],
    ]);
    const shadowed = r.body.plugins.find((p: any) => p.state === 'shadowed');
    expect(shadowed.instead).toBe(`${ns}/hello-executor-plugin`);
    expect(shadowed.reason).toMatch(/own namespace wins/);
    expect(r.body.plugins.find((p: any) => p.state === 'used').container).toEqual({
      name: 'hello',
      image: 'python:3.11-alpine',
      ports: [4355],
    });
    expect(r.body.unreadable).toEqual([]);

    // alice may read ConfigMaps of ns only: the installation namespace is reported unreadable, not fatal.
    await grantRole(ns, 'alice', 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }]);
    const partial = await call('GET', `${server.url}/api/v1/executor-plugins/${ns}`, { token: cluster().userTokens.alice });
    expect(partial.status).toBe(200);
    expect(partial.body.plugins.map((p: any) => p.state)).toEqual(['used']);
    expect(partial.body.unreadable).toEqual([{ namespace: install, message: expect.stringMatching(/forbidden/) }]);
    expect((await call('GET', `${server.url}/api/v1/executor-plugins/${ns}`, { token: cluster().userTokens.bob })).status).toBe(403);
  });
});
