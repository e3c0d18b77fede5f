/**
 * The peer's REST operations that plugflow's server added for the peer's clients (issue 46),
 * against the real API server with RBAC on, each with a token of limited rights: submit from a
 * template or a CronWorkflow with the peer's submit options, the template and cron lints,
 * version/info/tracking, the ConfigMap semaphore limits (sync), the namespace Events stream, and
 * bodies sent as the argo CLI sends them (JSON without a Content-Type).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_CRON_WORKFLOW, LABEL_WORKFLOW_TEMPLATE, PLUGFLOW_RELEASE } from '../src/api/index.js';
import { adminKubeConfig, cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';
import { call, createObject, grantRole, rule, startTestServer, type TestServer } from './support/server.js';
import { openSse } from './support/sse.js';

const templates = [
  {
    name: 'main',
    inputs: { parameters: [{ name: 'who' }] },
    container: { image: 'busybox', command: ['echo', '{{inputs.parameters.who}}'] },
  },
];
const spec = {
  entrypoint: 'main',
  arguments: { parameters: [{ name: 'who', value: 'world' }] },
  templates: [
    {
      name: 'main',
      steps: [[{ name: 's', template: 'echo', arguments: { parameters: [{ name: 'who', value: '{{workflow.parameters.who}}' }] } }]],
    },
    { ...templates[0], name: 'echo' },
  ],
};

/** A Kubernetes Event about workflow `w`, made as admin. */
async function recordEvent(namespace: string, name: string, reason: string, message: string): Promise<void> {
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedEvent({
      namespace,
      body: { metadata: { name }, involvedObject: { kind: 'Workflow', name: 'w', namespace }, reason, message, type: 'Normal' },
    });
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

describe("the peer's REST operations", () => {
  let ns: string;
  let s: TestServer;
  let alice: string; // workflows, templates, crons, configmaps and events in ns
  let bob: string; // nothing

  beforeAll(async () => {
    ns = await createTestNamespace('peer-routes');
    alice = cluster().userTokens.alice;
    bob = cluster().userTokens.bob;
    await grantRole(ns, 'alice', 'peer-client', [
      rule('workflows', 'create', 'get', 'list', 'delete'),
      rule('workflowtemplates', 'create', 'get', 'list'),
      rule('cronworkflows', 'create', 'get', 'list'),
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['list', 'watch'] },
    ]);
    s = await startTestServer({ namespace: ns });
    await createObject(ns, 'workflowtemplates', { kind: 'WorkflowTemplate', metadata: { name: 'greeter' }, spec });
    await createObject(ns, 'cronworkflows', {
      kind: 'CronWorkflow',
      metadata: { name: 'nightly' },
      spec: { schedule: '0 3 * * *', workflowMetadata: { labels: { team: 'data' } }, workflowSpec: spec },
    });
  });

  afterAll(async () => {
    await s?.close();
    await deleteTestNamespace(ns);
  });

  const api = (path: string) => `${s.url}/api/v1${path}`;

  it('submits from a WorkflowTemplate with the peer options: parameters, labels, name, entrypoint', async () => {
    const r = await call('POST', api(`/workflows/${ns}/submit`), {
      token: alice,
      body: {
        namespace: ns,
        resourceKind: 'WorkflowTemplate',
        resourceName: 'greeter',
        submitOptions: { name: 'from-template', parameters: ['who=peer'], labels: 'a=1,b=2', entryPoint: 'main' },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.metadata).toMatchObject({ name: 'from-template', labels: { a: '1', b: '2', [LABEL_WORKFLOW_TEMPLATE]: 'greeter' } });
    expect(r.body.spec).toEqual({
      workflowTemplateRef: { name: 'greeter' },
      entrypoint: 'main',
      arguments: { parameters: [{ name: 'who', value: 'peer' }] },
    });
  });

  it('submits from a CronWorkflow (short kind name) with its workflowSpec and metadata, owned by it; dryRun stores nothing', async () => {
    const r = await call('POST', api(`/workflows/${ns}/submit`), {
      token: alice,
      body: { resourceKind: 'cronwf', resourceName: 'nightly', submitOptions: { parameters: ['who=cron'] } },
    });
    expect(r.status).toBe(200);
    expect(r.body.metadata.generateName).toBe('nightly-');
    expect(r.body.metadata.labels).toMatchObject({ team: 'data', [LABEL_CRON_WORKFLOW]: 'nightly' });
    expect(r.body.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'CronWorkflow', name: 'nightly', controller: true })]);
    expect(r.body.spec.arguments.parameters).toEqual([{ name: 'who', value: 'cron' }]);
    const dry = await call('POST', api(`/workflows/${ns}/submit`), {
      token: alice,
      body: { resourceKind: 'WorkflowTemplate', resourceName: 'greeter', submitOptions: { name: 'never-stored', dryRun: true } },
    });
    expect(dry.status).toBe(200);
    expect((await call('GET', api(`/workflows/${ns}/never-stored`), { token: alice })).status).toBe(404);
  });

  it('refuses a submit naming what is wrong: kind, missing template, unknown option, rights', async () => {
    const submit = (body: unknown, token = alice) => call('POST', api(`/workflows/${ns}/submit`), { token, body });
    const kind = await submit({ resourceKind: 'Pod', resourceName: 'x' });
    expect(kind.status).toBe(400);
    expect(kind.body).toEqual({ code: 3, message: expect.stringMatching(/^resourceKind "Pod" cannot be submitted/) });
    expect((await submit({ resourceKind: 'WorkflowTemplate', resourceName: 'absent' })).status).toBe(404);
    const option = await submit({ resourceKind: 'WorkflowTemplate', resourceName: 'greeter', submitOptions: { colour: 'red' } });
    expect(option.body.message).toBe("submitOptions.colour is not supported by plugflow's submit");
    const param = await submit({ resourceKind: 'WorkflowTemplate', resourceName: 'greeter', submitOptions: { parameters: ['novalue'] } });
    expect(param.body.message).toBe('submitOptions.parameters[0] must be "name=value", got "novalue"');
    expect((await submit({ resourceKind: 'WorkflowTemplate', resourceName: 'greeter' }, bob)).status).toBe(403);
  });

  it('lints templates, cluster templates and CronWorkflows without storing them', async () => {
    const good = await call('POST', api(`/workflow-templates/${ns}/lint`), {
      token: alice,
      body: { template: { metadata: { name: 'linted' }, spec } },
    });
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ kind: 'WorkflowTemplate', metadata: { name: 'linted', namespace: ns } });
    expect((await call('GET', api(`/workflow-templates/${ns}/linted`), { token: alice })).status).toBe(404);
    const bad = await call('POST', api('/cluster-workflow-templates/lint'), {
      token: alice,
      body: { template: { metadata: { name: 'broken' }, spec: { templates: 'not a list' } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^ClusterWorkflowTemplate broken is invalid: spec\.templates/);
    const cron = await call('POST', api(`/cron-workflows/${ns}/lint`), {
      token: alice,
      body: { cronWorkflow: { metadata: { name: 'bad-cron' }, spec: { schedule: '99 * * * *', workflowSpec: spec } } },
    });
    expect(cron.status).toBe(400);
    expect(cron.body.message).toMatch(/^CronWorkflow .*\/bad-cron is invalid: spec\.schedule: "99 \* \* \* \*" is not a cron schedule/);
  });

  it('answers version, info and tracking events', async () => {
    const v = await call('GET', api('/version'), { token: alice });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ version: `v${PLUGFLOW_RELEASE}`, compiler: 'node', platform: `${process.platform}/${process.arch}` });
    expect((await call('GET', api('/info'), { token: alice })).body).toEqual({ links: [], columns: [], navColor: '', modals: {} });
    expect((await call('POST', api('/tracking/event'), { token: alice, body: { name: 'page' } })).body).toEqual({});
    expect((await call('GET', api('/version'))).status).toBe(401);
  });

  it('creates, reads, changes and removes a ConfigMap semaphore limit, with the caller rights', async () => {
    const created = await call('POST', api(`/sync/${ns}`), { token: alice, body: { cmName: 'limits', key: 'gpu', limit: 2 } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ namespace: ns, cmName: 'limits', key: 'gpu', limit: 2, type: 'CONFIGMAP' });
    const again = await call('POST', api(`/sync/${ns}`), { token: alice, body: { cmName: 'limits', key: 'gpu', limit: 3 } });
    expect(again.status).toBe(409);
    expect((await call('PUT', api(`/sync/${ns}/gpu`), { token: alice, body: { cmName: 'limits', limit: 5 } })).body.limit).toBe(5);
    expect((await call('GET', api(`/sync/${ns}/gpu?cmName=limits`), { token: alice })).body.limit).toBe(5);
    const db = await call('GET', api(`/sync/${ns}/gpu?cmName=limits&type=DATABASE`), { token: alice });
    expect(db.status).toBe(400);
    expect(db.body.message).toMatch(/plugflow keeps semaphore limits in ConfigMaps only/);
    expect((await call('POST', api(`/sync/${ns}`), { token: alice, body: { cmName: 'limits', key: 'cpu', limit: 0 } })).status).toBe(400);
    expect((await call('DELETE', api(`/sync/${ns}/gpu?cmName=limits`), { token: alice })).body).toEqual({});
    expect((await call('GET', api(`/sync/${ns}/gpu?cmName=limits`), { token: alice })).status).toBe(404);
    expect((await call('POST', api(`/sync/${ns}`), { token: bob, body: { cmName: 'limits', key: 'x', limit: 1 } })).status).toBe(403);
  });

  it("streams the namespace's Events as the peer's UI reads them", async () => {
    await recordEvent(ns, 'seen-before', 'Before', 'there before the stream');
    const sse = await openSse(api(`/stream/events/${ns}?listOptions.fieldSelector=${encodeURIComponent('involvedObject.name=w')}`), alice);
    try {
      expect((await sse.next()).data.result).toMatchObject({ reason: 'Before', involvedObject: { name: 'w' } });
      await recordEvent(ns, 'seen-after', 'After', 'added while streaming');
      expect((await sse.next((m) => m.data.result?.reason === 'After')).data.result.message).toBe('added while streaming');
    } finally {
      sse.close();
    }
    expect((await openSse(api(`/stream/events/${ns}`), bob)).status).toBe(403);
  });

  it("takes the argo CLI's writes: JSON bodies without a Content-Type, on POST and DELETE", async () => {
    const headers = { authorization: `Bearer ${alice}` };
    const body = JSON.stringify({ namespace: ns, workflow: { metadata: { name: 'untyped' }, spec } });
    const created = await request(api(`/workflows/${ns}`), { method: 'POST', headers, body: Buffer.from(body), dispatcher: insecure });
    expect(created.statusCode).toBe(200);
    expect(((await created.body.json()) as { metadata: { name: string } }).metadata.name).toBe('untyped');
    const deleted = await request(api(`/workflows/${ns}/untyped`), {
      method: 'DELETE',
      headers,
      body: Buffer.from(JSON.stringify({ namespace: ns, name: 'untyped' })),
      dispatcher: insecure,
    });
    expect(deleted.statusCode).toBe(200);
    await deleted.body.dump();
  });
});
