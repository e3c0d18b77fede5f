/**
 * Workflow REST against the real API server with RBAC on: what a permitted token can do, what
 * a token without rights and a missing token get, server auth mode, dry runs, duplicates,
 * validation, body limits, health and metrics, and the CLI's --server path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_WORKFLOW_TEMPLATE } from '../src/api/index.js';
import { runDelete, runGet, runList, runSubmit } from '../src/cli/rest.js';
import { cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import { call, createObject, grantRole, listWorkflows, rule, startTestServer, type TestServer } from './support/server.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const hello = (extra: Record<string, unknown> = {}) => ({
  metadata: { generateName: 'hello-', labels: { suite: 'rest' }, ...extra },
  spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', 'hi'] } }] },
});

/** The shared bearer token of the server-mode server (--server-token-file). */
const SHARED = 'shared-secret-of-the-server-mode-test';

describe('workflow REST', () => {
  let ns: string;
  let client: TestServer; // HTTPS with a generated certificate, --auth-mode=client
  let server: TestServer; // plain HTTP, --auth-mode=server
  let alice: string; // may create, list, get and delete workflows (and read templates) in ns
  let bob: string; // no rights at all

  beforeAll(async () => {
    ns = await createTestNamespace('rest');
    alice = cluster().userTokens.alice;
    bob = cluster().userTokens.bob;
    await grantRole(ns, 'alice', 'workflow-editor', [
      rule('workflows', 'create', 'get', 'list', 'delete'),
      rule('workflowtemplates', 'get'),
    ]);
    [client, server] = await Promise.all([
      startTestServer({ namespace: ns }),
      startTestServer({ namespace: ns, secure: false, authMode: 'server', serverToken: SHARED, allowedNamespaces: [ns] }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([client?.close(), server?.close()]);
    await deleteTestNamespace(ns);
  });

  const wfUrl = (s: TestServer, name = '') => `${s.url}/api/v1/workflows/${ns}${name ? `/${name}` : ''}`;

  it('serves HTTPS with a generated certificate by default, and plain HTTP with secure=false', () => {
    expect(client.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(client.fingerprint).toMatch(/^[0-9a-f:]+$/);
    expect(server.url).toMatch(/^http:\/\//);
  });

  it('creates, lists, gets and deletes with a permitted token', async () => {
    const created = await call('POST', wfUrl(client), { token: alice, body: { namespace: ns, serverDryRun: false, workflow: hello() } });
    expect(created.status).toBe(200);
    const name: string = created.body.metadata.name;
    expect(name).toMatch(/^hello-[a-z0-9]{5}$/);
    expect(created.body.metadata.namespace).toBe(ns);
    expect(created.body.metadata.labels).toEqual({ suite: 'rest' });
    expect(created.body.metadata.uid).toBeTruthy();

    const second = await call('POST', wfUrl(client), { token: alice, body: { workflow: hello() } });
    expect(second.status).toBe(200);

    const byLabel = await call('GET', `${wfUrl(client)}?listOptions.labelSelector=suite%3Drest`, { token: alice });
    expect(byLabel.status).toBe(200);
    expect(byLabel.body.items.map((w: any) => w.metadata.name).sort()).toEqual([name, second.body.metadata.name].sort());

    const byField = await call('GET', `${wfUrl(client)}?listOptions.fieldSelector=metadata.name%3D${name}`, { token: alice });
    expect(byField.body.items.map((w: any) => w.metadata.name)).toEqual([name]);

    const page1 = await call('GET', `${wfUrl(client)}?listOptions.labelSelector=suite%3Drest&listOptions.limit=1`, { token: alice });
    expect(page1.body.items).toHaveLength(1);
    expect(page1.body.metadata.continue).toBeTruthy();
    const page2 = await call(
      'GET',
      `${wfUrl(client)}?listOptions.labelSelector=suite%3Drest&listOptions.limit=1&listOptions.continue=${encodeURIComponent(page1.body.metadata.continue)}`,
      { token: alice },
    );
    expect(page2.body.items).toHaveLength(1);
    expect(page2.body.items[0].metadata.name).not.toBe(page1.body.items[0].metadata.name);

    const got = await call('GET', wfUrl(client, name), { token: alice });
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);

    const deleted = await call('DELETE', wfUrl(client, name), { token: alice });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    const gone = await call('GET', wfUrl(client, name), { token: alice });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ code: 5, message: expect.stringContaining(name) });
    await call('DELETE', wfUrl(client, second.body.metadata.name), { token: alice });
  });

  it('answers 403 to a token whose role lacks the rights, for every call', async () => {
    const forbidden = [
      await call('POST', wfUrl(client), { token: bob, body: { workflow: hello() } }),
      await call('GET', wfUrl(client), { token: bob }),
      await call('GET', wfUrl(client, 'x'), { token: bob }),
      await call('DELETE', wfUrl(client, 'x'), { token: bob }),
    ];
    for (const r of forbidden) {
      expect(r.status).toBe(403);
      expect(r.body.code).toBe(7);
      expect(r.body.message).toMatch(/forbidden/i);
    }
    expect(await listWorkflows(ns, 'suite=rest')).toEqual([]);
  });

  it('answers 401 in client mode without a token, with another scheme, or with a token the API server rejects', async () => {
    const none = await call('GET', wfUrl(client));
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ code: 16, message: expect.stringContaining('Authorization: Bearer') });
    const basic = await call('GET', wfUrl(client), { headers: { authorization: 'Basic YTpi' } });
    expect(basic.status).toBe(401);
    const invalid = await call('GET', wfUrl(client), { token: 'not-a-real-token' });
    expect(invalid.status).toBe(401);
    expect(invalid.body.code).toBe(16);
    const invalidCreate = await call('POST', wfUrl(client), { token: 'not-a-real-token', body: { workflow: hello() } });
    expect(invalidCreate.status).toBe(401);
  });

  it('server mode: the shared token is needed, calls use the server account, only allowed namespaces', async () => {
    for (const token of [undefined, alice, 'guess']) {
      const refused = await call('POST', wfUrl(server), { token, body: { workflow: hello({ labels: { suite: 'server-mode' } }) } });
      expect(refused.status).toBe(401);
      expect((await call('GET', wfUrl(server), { token })).status).toBe(401);
    }
    const created = await call('POST', wfUrl(server), { token: SHARED, body: { workflow: hello({ labels: { suite: 'server-mode' } }) } });
    expect(created.status).toBe(200);
    const listed = await call('GET', `${wfUrl(server)}?listOptions.labelSelector=suite%3Dserver-mode`, { token: SHARED });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((w: any) => w.metadata.name)).toEqual([created.body.metadata.name]);
    expect((await call('DELETE', wfUrl(server, created.body.metadata.name), { token: SHARED })).status).toBe(200);
    const elsewhere = await call('POST', `${server.url}/api/v1/workflows/default`, { token: SHARED, body: { workflow: hello() } });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.message).toBe(`namespace "default" is not served here: this server serves only "${ns}" (--allowed-namespaces)`);
    expect((await call('POST', `${server.url}/api/v1/events/default/`, { token: SHARED, body: {} })).status).toBe(403);
    // An empty namespace segment is a list across every namespace (the review's bypass): refused on every route that takes one.
    for (const path of [
      '/api/v1/workflow-event-bindings/',
      '/api/v1/workflow-templates/',
      '/api/v1/cron-workflows/',
      '/api/v1/workflows/',
      '/api/v1/workflow-events/',
      '/api/v1/executor-plugins/',
      '/api/v1/access/',
    ]) {
      const all = await call('GET', `${server.url}${path}`, { token: SHARED });
      expect([path, all.status]).toEqual([path, 403]);
      expect(all.body.message).toMatch(/this server serves only .* \(--allowed-namespaces\): name one of them in the path/);
    }
    const odd = await call('GET', `${server.url}/api/v1/workflow-event-bindings/%2F..%2F`, { token: SHARED });
    expect(odd.status).toBe(400);
    expect(odd.body.message).toBe('"/../" is not a valid namespace name');
    expect(server.logs.some((l) => JSON.parse(l).message.startsWith('auth-mode=server: every call runs as the server'))).toBe(true);
  });

  it('server mode refuses to start without a guard', async () => {
    await expect(startTestServer({ namespace: ns, secure: false, authMode: 'server' })).rejects.toThrow(
      /needs a guard: give --server-token-file/,
    );
  });

  it('stores nothing on serverDryRun (and on createOptions.dryRun)', async () => {
    const dry = await call('POST', wfUrl(client), {
      token: alice,
      body: {
        namespace: ns,
        serverDryRun: true,
        workflow: hello({ name: 'dry-run-1', generateName: undefined, labels: { suite: 'dry' } }),
      },
    });
    expect(dry.status).toBe(200);
    expect(dry.body.metadata.name).toBe('dry-run-1');
    const dry2 = await call('POST', wfUrl(client), {
      token: alice,
      body: { createOptions: { dryRun: ['All'] }, workflow: hello({ name: 'dry-run-2', labels: { suite: 'dry' } }) },
    });
    expect(dry2.status).toBe(200);
    expect((await call('GET', wfUrl(client, 'dry-run-1'), { token: alice })).status).toBe(404);
    expect(await listWorkflows(ns, 'suite=dry')).toEqual([]);
  });

  it('answers 409 to a name that exists', async () => {
    const wf = hello({ name: 'unique-once', generateName: undefined });
    expect((await call('POST', wfUrl(client), { token: alice, body: { workflow: wf } })).status).toBe(200);
    const again = await call('POST', wfUrl(client), { token: alice, body: { workflow: wf } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ code: 6, message: expect.stringContaining('unique-once') });
  });

  it('answers 400 naming the field for an invalid workflow, and stores nothing', async () => {
    const noEntry = await call('POST', wfUrl(client), {
      token: alice,
      body: { workflow: { ...hello({ labels: { suite: 'invalid' } }), spec: { templates: hello().spec.templates } } },
    });
    expect(noEntry.status).toBe(400);
    expect(noEntry.body.code).toBe(3);
    expect(noEntry.body.message).toContain('spec.entrypoint');

    const unknownEntry = await call('POST', wfUrl(client), {
      token: alice,
      body: { workflow: { ...hello({ labels: { suite: 'invalid' } }), spec: { ...hello().spec, entrypoint: 'nope' } } },
    });
    expect(unknownEntry.status).toBe(400);
    expect(unknownEntry.body.message).toMatch(/spec\.entrypoint.*"nope"/);

    const missingTemplate = await call('POST', wfUrl(client), {
      token: alice,
      body: {
        workflow: {
          metadata: { generateName: 'ref-', labels: { suite: 'invalid' } },
          spec: { workflowTemplateRef: { name: 'does-not-exist' } },
        },
      },
    });
    expect(missingTemplate.status).toBe(400);
    expect(missingTemplate.body.message).toContain('spec.workflowTemplateRef');

    const noWorkflow = await call('POST', wfUrl(client), { token: alice, body: { namespace: ns } });
    expect(noWorkflow.status).toBe(400);
    expect(noWorkflow.body.message).toMatch(/^workflow is required/);

    const badJson = await call('POST', wfUrl(client), { token: alice, body: '{"workflow": ' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.code).toBe(3);

    const otherNs = await call('POST', wfUrl(client), { token: alice, body: { namespace: 'elsewhere', workflow: hello() } });
    expect(otherNs.status).toBe(400);
    expect(otherNs.body.message).toContain('namespace');
    expect(await listWorkflows(ns, 'suite=invalid')).toEqual([]);
  });

  it('validates against the referenced WorkflowTemplate, read with the caller token', async () => {
    await createObject(ns, 'workflowtemplates', {
      kind: 'WorkflowTemplate',
      metadata: { name: 'needs-param' },
      spec: { entrypoint: 'main', arguments: { parameters: [{ name: 'who' }] }, templates: hello().spec.templates },
    });
    const missing = await call('POST', wfUrl(client), {
      token: alice,
      body: { workflow: { metadata: { generateName: 'np-' }, spec: { workflowTemplateRef: { name: 'needs-param' } } } },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('spec.arguments.parameters[who]');
    const ok = await call('POST', wfUrl(client), {
      token: alice,
      body: {
        workflow: {
          metadata: { generateName: 'np-', labels: { [LABEL_WORKFLOW_TEMPLATE]: 'needs-param' } },
          spec: { workflowTemplateRef: { name: 'needs-param' }, arguments: { parameters: [{ name: 'who', value: 'me' }] } },
        },
      },
    });
    expect(ok.status).toBe(200);
  });

  it('answers 413 to a body over the limit', async () => {
    const small = await startTestServer({ namespace: ns, secure: false, authMode: 'server', serverToken: SHARED, maxBodyBytes: 4096 });
    try {
      const big = await call('POST', `${small.url}/api/v1/workflows/${ns}`, {
        token: SHARED,
        body: { workflow: hello({ annotations: { pad: 'x'.repeat(8192) } }) },
      });
      expect(big.status).toBe(413);
      expect(big.body.code).toBe(8);
      const bigEvent = await call('POST', `${small.url}/api/v1/events/${ns}/`, { token: SHARED, body: { pad: 'x'.repeat(8192) } });
      expect(bigEvent.status).toBe(413);
      expect(bigEvent.body.code).toBe(8);
      expect((await call('POST', `${small.url}/api/v1/events/${ns}/`, { token: SHARED, body: { pad: 'x'.repeat(100) } })).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('answers unknown paths with 404 in the error shape', async () => {
    const r = await call('GET', `${client.url}/api/v1/nothing`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 5, message: 'no such endpoint: GET /api/v1/nothing' });
  });

  it('has /healthz and /readyz without a token, /metrics only on its own port, and never puts a token in metrics or logs', async () => {
    expect((await call('GET', `${client.url}/healthz`)).status).toBe(200);
    expect((await call('GET', `${client.url}/readyz`)).body).toEqual({ status: 'ok' });
    expect((await call('GET', `${client.url}/metrics`)).status).toBe(404);
    expect(client.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(client.metricsUrl).not.toContain(`:${client.port}/`);
    const metrics = await call('GET', client.metricsUrl);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('plugflow_server_requests_total{route="/api/v1/workflows/:namespace",method="POST",status="200"}');
    expect(metrics.text).toContain('plugflow_event_queue_capacity 64');
    for (const token of [alice, bob, 'not-a-real-token']) {
      expect(metrics.text).not.toContain(token);
      expect(client.logs.join('\n')).not.toContain(token);
    }
    expect(client.logs.some((l) => JSON.parse(l).message === 'server started')).toBe(true);
  });

  it('CLI: submit, list, get and delete with --server and --token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plugflow-cli-'));
    const file = join(dir, 'wf.yaml');
    writeFileSync(
      file,
      [
        'metadata:',
        '  generateName: cli-',
        '  labels: { suite: cli }',
        'spec:',
        '  entrypoint: main',
        '  arguments: { parameters: [{ name: who, value: x }] }',
        '  templates:',
        '    - name: main',
        '      container: { image: busybox, command: [echo, hi] }',
        '',
      ].join('\n'),
    );
    const lines: string[] = [];
    const p = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(`ERR ${l}`) };
    const flags = { server: client.url, token: alice, insecureSkipTlsVerify: true, namespace: ns };

    expect(await runSubmit(file, { ...flags, parameter: ['who=cli-user'], output: 'name' }, p)).toBe(0);
    const name = lines.pop()!;
    expect(name).toMatch(/^cli-[a-z0-9]{5}$/);
    const stored = (await listWorkflows(ns, 'suite=cli'))[0];
    expect(stored.spec.arguments.parameters).toEqual([{ name: 'who', value: 'cli-user' }]);

    expect(await runList({ ...flags, selector: 'suite=cli' }, p)).toBe(0);
    expect(lines.splice(0)).toEqual([
      expect.stringMatching(/^NAME\s+STATUS\s+AGE/),
      expect.stringMatching(new RegExp(`^${name}\\s+Pending`)),
    ]);

    expect(await runGet(name, flags, p)).toBe(0);
    expect(lines.splice(0).join('\n')).toMatch(new RegExp(`Name:\\s+${name}[\\s\\S]*Status:\\s+Pending`));

    expect(await runDelete([name], flags, p)).toBe(0);
    expect(lines.splice(0)).toEqual([`Workflow ${ns}/${name} deleted`]);
    await expect(runGet(name, flags, p)).rejects.toThrow(/404/);
    await expect(runList({ ...flags, token: bob }, p)).rejects.toThrow(/403/);
  });
});
