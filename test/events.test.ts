/**
 * The event endpoint and WorkflowEventBindings against the real API server with RBAC on:
 * matching, the header forms of the spec, cluster templates, name clashes, the caller's rights,
 * binding errors as Kubernetes Events, metrics, and the sync dispatch mode.
 */
import { CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GROUP,
  LABEL_CLUSTER_WORKFLOW_TEMPLATE,
  LABEL_WORKFLOW_EVENT_BINDING,
  LABEL_WORKFLOW_TEMPLATE,
  VERSION,
} from '../src/api/index.js';
import { runEventSend } from '../src/cli/event.js';
import { adminKubeConfig, cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import {
  call,
  createObject,
  eventsAbout,
  eventually,
  grantRole,
  listWorkflows,
  rule,
  startTestServer,
  type TestServer,
} from './support/server.js';

const templates = [{ name: 'main', container: { image: 'busybox', command: ['echo', 'hi'] } }];

describe('event endpoint and bindings', () => {
  let ns: string;
  let srv: TestServer;
  let alice: string; // may send events, read templates (and the cluster template) and create workflows
  let carol: string; // may send events and create workflows, but not read templates
  let bob: string; // no rights
  const cwt = `events-cwt-${randomBytes(3).toString('hex')}`;
  const clusterRole = `events-test-cwt-reader-${randomBytes(3).toString('hex')}`;

  const binding = (name: string, spec: Record<string, unknown>) =>
    createObject(ns, 'workfloweventbindings', { kind: 'WorkflowEventBinding', metadata: { name }, spec });
  const cached = (s: TestServer, ...names: string[]) =>
    eventually(async () => names.every((n) => s.bindings(ns).some((b) => b.name === n)), `bindings ${names.join(', ')} in the cache`);
  const dispatched = (s: TestServer) => eventually(async () => s.eventsInProcess() === 0, 'the event queue to empty');
  const send = (
    s: TestServer,
    body: unknown,
    opts: { token?: string; headers?: Record<string, string | string[]>; discriminator?: string } = {},
  ) =>
    call('POST', `${s.url}/api/v1/events/${ns}/${opts.discriminator ?? ''}`, { token: opts.token ?? alice, body, headers: opts.headers });
  const byBinding = (name: string) => listWorkflows(ns, `${LABEL_WORKFLOW_EVENT_BINDING}=${name}`);
  const warnings = (name: string) =>
    eventsAbout(ns, name).then((evs) => evs.filter((e) => e.type === 'Warning' && e.reason === 'WorkflowEventBindingError'));

  beforeAll(async () => {
    ns = await createTestNamespace('events');
    ({ alice, carol, bob } = cluster().userTokens);
    await grantRole(ns, 'alice', 'event-sender', [
      rule('workfloweventbindings', 'list'),
      rule('workflowtemplates', 'get'),
      rule('workflows', 'create'),
      { apiGroups: [''], resources: ['events'], verbs: ['list'] },
    ]);
    await grantRole(ns, 'carol', 'event-sender-no-templates', [rule('workfloweventbindings', 'list'), rule('workflows', 'create')]);
    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: clusterRole }, rules: [rule('clusterworkflowtemplates', 'get')] } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: clusterRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    await createObject(ns, 'workflowtemplates', {
      kind: 'WorkflowTemplate',
      metadata: { name: 'greet' },
      spec: { entrypoint: 'main', arguments: { parameters: [{ name: 'message' }, { name: 'count' }, { name: 'details' }] }, templates },
    });
    await adminKubeConfig()
      .makeApiClient(CustomObjectsApi)
      .createClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: 'clusterworkflowtemplates',
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'ClusterWorkflowTemplate',
          metadata: { name: cwt },
          spec: { entrypoint: 'main', templates },
        },
      });
    srv = await startTestServer({ namespace: ns, secure: false });
  });

  afterAll(async () => {
    await srv?.close();
    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRoleBinding({ name: clusterRole }).catch(() => {});
    await rbac.deleteClusterRole({ name: clusterRole }).catch(() => {});
    await adminKubeConfig()
      .makeApiClient(CustomObjectsApi)
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'clusterworkflowtemplates', name: cwt })
      .catch(() => {});
    await deleteTestNamespace(ns);
  });

  it('a matching event creates exactly one workflow from the template, with its parameters and metadata', async () => {
    await binding('greet-on-hello', {
      event: { selector: 'payload.test == "match" && metadata["x-source"] == ["tests"]' },
      submit: {
        workflowTemplateRef: { name: 'greet' },
        arguments: {
          parameters: [
            { name: 'message', valueFrom: { event: 'payload.message' } },
            { name: 'count', valueFrom: { event: 'payload.count' } },
            { name: 'details', valueFrom: { event: 'payload.details' } },
          ],
        },
        metadata: { labels: { sender: 'payload.sender' }, annotations: { 'example.com/note': '"from " + metadata["x-source"][0]' } },
      },
    });
    await cached(srv, 'greet-on-hello');
    const reply = await send(
      srv,
      { test: 'match', message: 'hello world', count: 3, details: { b: [1, 'x'], a: true }, sender: 'ann' },
      { headers: { 'X-Source': 'tests' } },
    );
    expect(reply.status).toBe(200);
    const wfs = await byBinding('greet-on-hello');
    expect(wfs).toHaveLength(1);
    const wf = wfs[0];
    // The default (sync) dispatch answers once the workflow exists, and names it.
    expect((reply.body as { workflows: unknown[] }).workflows).toEqual([{ binding: 'greet-on-hello', name: wf.metadata.name }]);
    expect(wf.metadata.name).toMatch(/^greet-\d{14}-[a-z0-9]{6}$/);
    expect(wf.spec).toEqual({
      workflowTemplateRef: { name: 'greet' },
      arguments: {
        parameters: [
          { name: 'message', value: 'hello world' },
          { name: 'count', value: '3' },
          { name: 'details', value: '{"a":true,"b":[1,"x"]}' },
        ],
      },
    });
    expect(wf.metadata.labels).toEqual({
      sender: 'ann',
      [LABEL_WORKFLOW_TEMPLATE]: 'greet',
      [LABEL_WORKFLOW_EVENT_BINDING]: 'greet-on-hello',
    });
    expect(wf.metadata.annotations).toEqual({
      'example.com/note': 'from tests',
      // A nonce of the submission: what tells its own create, retried, from a name someone else took.
      'workflows.plugflow.io/event-digest': expect.stringMatching(/^[0-9a-f]{32}$/),
    });

    const miss = await send(srv, { test: 'match', message: 'no header' });
    expect(miss.status).toBe(200);
    await dispatched(srv);
    expect(await byBinding('greet-on-hello')).toHaveLength(1);
  });

  it('the wrong header forms of the spec do not match: upper-case name, no x- prefix, plain string, authorization', async () => {
    const submit = { workflowTemplateRef: { name: 'greet' } };
    await binding('form-right', { event: { selector: 'payload.test == "forms" && metadata["x-name"] == ["value"]' }, submit });
    await binding('form-upper', { event: { selector: 'payload.test == "forms" && metadata["X-Name"] == ["value"]' }, submit });
    await binding('form-no-prefix', { event: { selector: 'payload.test == "forms" && metadata["name"] == ["value"]' }, submit });
    await binding('form-plain-string', { event: { selector: 'payload.test == "forms" && metadata["x-name"] == "value"' }, submit });
    await binding('form-authorization', { event: { selector: 'payload.test == "forms" && metadata["authorization"] != nil' }, submit });
    await cached(srv, 'form-right', 'form-upper', 'form-no-prefix', 'form-plain-string', 'form-authorization');
    const reply = await send(srv, { test: 'forms' }, { headers: { 'X-Name': 'value', Name: 'value' } });
    expect(reply.status).toBe(200);
    await dispatched(srv);
    expect(await byBinding('form-right')).toHaveLength(1);
    for (const wrong of ['form-upper', 'form-no-prefix', 'form-plain-string', 'form-authorization'])
      expect(await byBinding(wrong)).toEqual([]);
  });

  it('a binding to a ClusterWorkflowTemplate submits it with clusterScope', async () => {
    await binding('to-cluster-template', {
      event: { selector: 'payload.test == "cluster" && discriminator == "ci"' },
      submit: { workflowTemplateRef: { name: cwt, clusterScope: true } },
    });
    await cached(srv, 'to-cluster-template');
    expect((await send(srv, { test: 'cluster' }, { discriminator: 'ci' })).status).toBe(200);
    expect((await send(srv, { test: 'cluster' })).status).toBe(200); // empty discriminator: no match
    await dispatched(srv);
    const wfs = await byBinding('to-cluster-template');
    expect(wfs).toHaveLength(1);
    expect(wfs[0].spec.workflowTemplateRef).toEqual({ name: cwt, clusterScope: true });
    expect(wfs[0].metadata.labels[LABEL_CLUSTER_WORKFLOW_TEMPLATE]).toBe(cwt);
  });

  it('a name clash fails that submission only, and is recorded on the binding', async () => {
    await createObject(ns, 'workflows', { kind: 'Workflow', metadata: { name: 'taken-1' }, spec: { entrypoint: 'main', templates } });
    await binding('clash-named', {
      event: { selector: 'payload.test == "clash"' },
      submit: { workflowTemplateRef: { name: 'greet' }, metadata: { name: '"taken-" + payload.id' } },
    });
    await binding('clash-other', { event: { selector: 'payload.test == "clash"' }, submit: { workflowTemplateRef: { name: 'greet' } } });
    await cached(srv, 'clash-named', 'clash-other');
    expect((await send(srv, { test: 'clash', id: '1' })).status).toBe(200);
    await dispatched(srv);
    expect(await byBinding('clash-named')).toEqual([]);
    expect(await byBinding('clash-other')).toHaveLength(1);
    const evs = await eventually(
      async () => (await warnings('clash-named')).length > 0 && warnings('clash-named'),
      'a Warning Event on clash-named',
    );
    expect(evs[0].message).toContain('taken-1 already exists');
    expect(srv.logs.some((l) => l.includes('"outcome":"name_clash"'))).toBe(true);
  });

  it('a token whose role cannot read the template submits nothing', async () => {
    await binding('needs-template-read', {
      event: { selector: 'payload.test == "carol"' },
      submit: { workflowTemplateRef: { name: 'greet' } },
    });
    await cached(srv, 'needs-template-read');
    expect((await send(srv, { test: 'carol' }, { token: carol })).status).toBe(200);
    await dispatched(srv);
    expect(await byBinding('needs-template-read')).toEqual([]);
    const evs = await eventually(
      async () => (await warnings('needs-template-read')).length > 0 && warnings('needs-template-read'),
      'a Warning Event',
    );
    expect(evs[0].message).toMatch(/reading WorkflowTemplate .*greet is forbidden/);
  });

  it('refuses callers before queueing: 401 without or with a bad token, 403 without rights on bindings', async () => {
    const none = await call('POST', `${srv.url}/api/v1/events/${ns}/`, { body: { test: 'x' } });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe(16);
    expect((await send(srv, { test: 'x' }, { token: 'no-such-token' })).status).toBe(401);
    const forbidden = await send(srv, { test: 'x' }, { token: bob });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ code: 7, message: expect.stringContaining('workfloweventbindings') });
  });

  it('accepts any JSON, with or without a content type; malformed JSON is 400; the empty discriminator needs its slash', async () => {
    for (const body of ['"just a string"', '42', 'null', '[1,2]', '{"a":{}}']) expect((await send(srv, body)).status).toBe(200);
    const noType = await call('POST', `${srv.url}/api/v1/events/${ns}/`, {
      token: alice,
      body: '{"a":1}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(noType.status).toBe(200);
    const bad = await send(srv, '{"a":');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(3);
    expect(bad.body.message).toMatch(/^the event body must be JSON/);
    expect((await send(srv, '')).status).toBe(400);
    const noSlash = await call('POST', `${srv.url}/api/v1/events/${ns}`, { token: alice, body: {} });
    expect(noSlash.status).toBe(404);
    expect(noSlash.body.message).toContain(`/api/v1/events/${ns}/`);
    await dispatched(srv);
  });

  it('reports a binding whose expressions do not compile when it is created, before any event', async () => {
    await binding('broken-selector', { event: { selector: 'payload.a ==' }, submit: { workflowTemplateRef: { name: 'greet' } } });
    const evs = await eventually(
      async () => (await warnings('broken-selector')).length > 0 && warnings('broken-selector'),
      'a Warning Event on broken-selector',
    );
    expect(evs[0].message).toMatch(/^binding is invalid and will be skipped: spec\.event\.selector/);
    expect(srv.logs.some((l) => l.includes('WorkflowEventBinding is invalid') && l.includes('broken-selector'))).toBe(true);
    expect(srv.bindings(ns).find((b) => b.name === 'broken-selector')?.problems).toHaveLength(1);
  });

  it('records per-event failures on the binding and counts every outcome in /metrics', async () => {
    await binding('not-boolean', {
      event: { selector: 'payload.test == "fail" ? "yes" : false' },
      submit: { workflowTemplateRef: { name: 'greet' } },
    });
    await binding('no-template', {
      event: { selector: 'payload.test == "fail"' },
      submit: { workflowTemplateRef: { name: 'missing-template' } },
    });
    await binding('number-label', {
      event: { selector: 'payload.test == "fail"' },
      submit: { workflowTemplateRef: { name: 'greet' }, metadata: { labels: { n: 'payload.n' } } },
    });
    await cached(srv, 'not-boolean', 'no-template', 'number-label');
    expect((await send(srv, { test: 'fail', n: 5 })).status).toBe(200);
    await dispatched(srv);
    const expectations: [string, RegExp][] = [
      ['not-boolean', /spec\.event\.selector must evaluate to a boolean, got string of 3 bytes/],
      ['no-template', /WorkflowTemplate .*missing-template does not exist/],
      ['number-label', /spec\.submit\.metadata\.labels\["n"\] must evaluate to a string/],
    ];
    for (const [name, message] of expectations) {
      const evs = await eventually(async () => (await warnings(name)).length > 0 && warnings(name), `a Warning Event on ${name}`);
      expect(evs[0].message).toMatch(message);
    }
    const metrics = (await call('GET', srv.metricsUrl)).text;
    const line = (binding: string, outcome: string) =>
      `plugflow_event_binding_total{namespace="${ns}",binding="${binding}",outcome="${outcome}"} `;
    expect(metrics).toContain(`${line('not-boolean', 'selector_error')}1`);
    expect(metrics).toContain(`${line('no-template', 'template_not_found')}1`);
    expect(metrics).toContain(`${line('number-label', 'metadata_error')}1`);
    expect(metrics).toContain(`${line('greet-on-hello', 'submitted')}1`);
    expect(metrics).toContain(line('greet-on-hello', 'no_match'));
    expect(metrics).toContain(`${line('clash-named', 'name_clash')}1`);
    expect(metrics).toContain(`${line('needs-template-read', 'forbidden')}1`);
    expect(metrics).toMatch(/plugflow_events_received_total\{result="forbidden"\} [1-9]/);
    for (const token of [alice, bob, carol]) {
      expect(metrics).not.toContain(token);
      expect(srv.logs.join('\n')).not.toContain(token);
    }
  });

  it('sync dispatch replies with the workflows created and the failures', async () => {
    const sync = await startTestServer({ namespace: ns, secure: false, eventDispatch: 'sync' });
    try {
      await binding('sync-ok', { event: { selector: 'payload.test == "sync"' }, submit: { workflowTemplateRef: { name: 'greet' } } });
      await binding('sync-clash', {
        event: { selector: 'payload.test == "sync"' },
        submit: { workflowTemplateRef: { name: 'greet' }, metadata: { name: '"taken-1"' } },
      });
      await cached(sync, 'sync-ok', 'sync-clash');
      const reply = await send(sync, { test: 'sync' });
      expect(reply.status).toBe(200);
      const created = await byBinding('sync-ok');
      expect(reply.body.workflows).toEqual([{ binding: 'sync-ok', name: created[0].metadata.name }]);
      expect(reply.body.errors).toContainEqual({
        binding: 'sync-clash',
        reason: 'name_clash',
        message: expect.stringContaining('taken-1 already exists'),
      });
      expect(reply.body.errors.map((e: { binding: string }) => e.binding)).not.toContain('sync-ok');
    } finally {
      await sync.close();
    }
  });

  it('an event with an id submits one workflow per binding however often it is delivered, on any replica', async () => {
    const sync = await startTestServer({ namespace: ns, secure: false, eventDispatch: 'sync' });
    try {
      await binding('dedup-a', { event: { selector: 'payload.test == "dedup"' }, submit: { workflowTemplateRef: { name: 'greet' } } });
      await binding('dedup-b', {
        event: { selector: 'payload.test == "dedup"', id: '"order-" + string(payload.order)' },
        submit: { workflowTemplateRef: { name: 'greet' } },
      });
      await cached(sync, 'dedup-a', 'dedup-b');
      await cached(srv, 'dedup-a', 'dedup-b');
      const headers = { 'X-GitHub-Delivery': 'delivery-7' };
      const first = await send(sync, { test: 'dedup', order: 1 }, { headers });
      expect(first.status).toBe(200);
      const a = (await byBinding('dedup-a')).map((w) => w.metadata.name);
      const b = (await byBinding('dedup-b')).map((w) => w.metadata.name);
      expect(a).toHaveLength(1);
      expect(b).toHaveLength(1);
      expect(first.body.workflows).toEqual([
        { binding: 'dedup-a', name: a[0] },
        { binding: 'dedup-b', name: b[0] },
      ]);
      // The sender redelivers, to this replica and to another (async) one: nothing new is created.
      const again = await send(sync, { test: 'dedup', order: 1 }, { headers });
      expect(again.body.workflows).toEqual([
        { binding: 'dedup-a', name: a[0], deduplicated: true },
        { binding: 'dedup-b', name: b[0], deduplicated: true },
      ]);
      expect((await send(srv, { test: 'dedup', order: 1 }, { headers })).status).toBe(200);
      await dispatched(srv);
      expect(await byBinding('dedup-a')).toHaveLength(1);
      expect(await byBinding('dedup-b')).toHaveLength(1);
      // dedup-b takes its id from the payload: a new delivery of the same order is the same event.
      await send(sync, { test: 'dedup', order: 1 }, { headers: { 'X-GitHub-Delivery': 'delivery-8' } });
      expect(await byBinding('dedup-a')).toHaveLength(2);
      expect(await byBinding('dedup-b')).toHaveLength(1);
      const created = (await byBinding('dedup-b'))[0];
      expect(created.metadata.annotations?.['workflows.plugflow.io/event-id']).toBe('order-1');
      const metrics = (await call('GET', sync.metricsUrl)).text;
      expect(metrics).toMatch(/plugflow_event_binding_total\{namespace="[^"]+",binding="dedup-b",outcome="deduplicated"\} 2/);
      // An id header that cannot be one is refused before the body is read, naming the header.
      const bad = await send(sync, { test: 'dedup' }, { headers: { 'X-Event-Id': 'x'.repeat(300) } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('header x-event-id is 300 characters long');
    } finally {
      await sync.close();
    }
  });

  it("one sender cannot suppress another's event by sending its id first, nor by taking the workflow's name", async () => {
    const dave = cluster().userTokens.dave!;
    await grantRole(ns, 'dave', 'event-sender-dave', [
      rule('workfloweventbindings', 'list'),
      rule('workflowtemplates', 'get'),
      rule('workflows', 'create'),
    ]);
    const sync = await startTestServer({ namespace: ns, secure: false, eventDispatch: 'sync' });
    try {
      await binding('guarded', { event: { selector: 'payload.test == "guarded"' }, submit: { workflowTemplateRef: { name: 'greet' } } });
      await cached(sync, 'guarded');
      // Dave guesses the id alice's next delivery will carry and sends it first.
      const headers = { 'X-GitHub-Delivery': 'delivery-guessed' };
      const early = await eventually(async () => {
        const r = await send(sync, { test: 'guarded', from: 'dave' }, { token: dave, headers });
        return r.status === 200 && r;
      }, "dave's rights to take effect");
      expect(early.body.workflows).toHaveLength(1);
      const real = await send(sync, { test: 'guarded', from: 'alice' }, { headers });
      expect(real.body.workflows).toEqual([{ binding: 'guarded', name: expect.any(String) }]);
      expect(real.body.workflows[0].name).not.toBe(early.body.workflows[0].name);
      expect(await byBinding('guarded')).toHaveLength(2);
      // Someone who may create workflows takes the name alice's next event will use: that event
      // is reported as a clash, not counted as a repeat of an event that never happened.
      const next = { 'X-GitHub-Delivery': 'delivery-squatted' };
      const probe = await send(sync, { test: 'guarded', from: 'alice', n: 2 }, { headers: next });
      const name = probe.body.workflows[0].name as string;
      await adminKubeConfig()
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({ group: 'plugflow.io', version: 'v1alpha1', namespace: ns, plural: 'workflows', name });
      await eventually(async () => !(await byBinding('guarded')).some((w) => w.metadata.name === name), 'the workflow gone');
      await createObject(ns, 'workflows', {
        kind: 'Workflow',
        metadata: {
          name,
          labels: { [LABEL_WORKFLOW_EVENT_BINDING]: 'squatter' },
          annotations: { 'workflows.plugflow.io/event-id': 'delivery-squatted' },
        },
        spec: { workflowTemplateRef: { name: 'greet' } },
      });
      const squatted = await send(sync, { test: 'guarded', from: 'alice', n: 2 }, { headers: next });
      expect(squatted.body.workflows).toEqual([]);
      expect(squatted.body.errors.filter((e: { binding: string }) => e.binding === 'guarded')).toEqual([
        { binding: 'guarded', reason: 'name_clash', message: expect.stringContaining('already exists and was not made by this event') },
      ]);
    } finally {
      await sync.close();
    }
  });

  it('server auth mode needs the shared token and submits with the server account', async () => {
    const open = await startTestServer({ namespace: ns, secure: false, authMode: 'server', serverToken: 'events-shared-token' });
    try {
      await binding('server-mode', {
        event: { selector: 'payload.test == "server-mode"' },
        submit: { workflowTemplateRef: { name: 'greet' } },
      });
      await cached(open, 'server-mode');
      expect((await call('POST', `${open.url}/api/v1/events/${ns}/`, { body: { test: 'server-mode' } })).status).toBe(401);
      expect((await call('POST', `${open.url}/api/v1/events/${ns}/`, { token: alice, body: { test: 'server-mode' } })).status).toBe(401);
      const reply = await call('POST', `${open.url}/api/v1/events/${ns}/`, { token: 'events-shared-token', body: { test: 'server-mode' } });
      expect(reply.status).toBe(200);
      await dispatched(open);
      expect(await byBinding('server-mode')).toHaveLength(1);
    } finally {
      await open.close();
    }
  });

  it('CLI: plugflow event send posts with headers and prints the reply', async () => {
    await binding('cli-send', {
      event: { selector: 'payload.test == "cli" && metadata["x-kind"] == ["a", "b"]' },
      submit: { workflowTemplateRef: { name: 'greet' } },
    });
    await cached(srv, 'cli-send');
    const out: string[] = [];
    const code = await runEventSend(
      ns,
      undefined,
      { server: srv.url, token: alice, data: '{"test":"cli"}', header: ['X-Kind: a', 'X-Kind: b'] },
      (l) => out.push(l),
    );
    expect(code).toBe(0);
    const made = await byBinding('cli-send');
    expect(made).toHaveLength(1);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^200 /);
    expect(JSON.parse(out[0].slice(4)).workflows).toEqual([{ binding: 'cli-send', name: made[0].metadata.name }]);
    expect(await runEventSend(ns, undefined, { server: srv.url, token: bob, data: '{}', header: [] }, (l) => out.push(l))).toBe(1);
    expect(out.pop()).toMatch(/^403 /);
  });

  it('counts per binding what it did with events — accepted, dispatched, failed, deduplicated — from its Events, for any replica', async () => {
    await binding('counted', {
      event: { selector: 'payload.test == "counted"', id: 'payload.id' },
      submit: { workflowTemplateRef: { name: 'greet' } },
    });
    await binding('counted-missing', {
      event: { selector: 'payload.test == "counted"' },
      submit: { workflowTemplateRef: { name: 'no-such-template' } },
    });
    await cached(srv, 'counted', 'counted-missing');
    for (const id of ['c-1', 'c-2', 'c-1']) expect((await send(srv, { test: 'counted', id })).status).toBe(200);
    const url = `${srv.url}/api/v1/workflow-event-bindings/${ns}/counters`;
    const counters = await eventually(async () => {
      const r = await call('GET', url, { token: alice });
      return r.body?.bindings?.counted?.accepted === 3 && r.body?.bindings?.['counted-missing']?.failed === 3 && r.body.bindings;
    }, 'the counters of both bindings');
    expect(counters.counted).toMatchObject({ accepted: 3, dispatched: 2, deduplicated: 1, failed: 0 });
    expect(counters['counted-missing']).toMatchObject({ accepted: 3, dispatched: 0, deduplicated: 0, failed: 3 });
    expect(Date.parse(counters.counted.since)).toBeGreaterThan(Date.now() - 10 * 60_000);
    // The caller's rights: reading the counters is listing Events.
    expect((await call('GET', url, { token: bob })).status).toBe(403);
  });
});
