/**
 * The CRDs in crds/ against a real kube-apiserver: they are accepted and established, documents
 * that use every template kind come back exactly as sent, and the mistakes the schemas are meant
 * to catch are refused with a message that names the field.
 */
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { request, type RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crdDefinitions, GROUP, loadCrds, PLURAL, VERSION } from '../src/api/index.js';
import { sampleEventBinding, sampleTaskSet, workflowWithEveryTemplateKind } from '../src/api/crd/sample-documents.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

type Doc = Record<string, any>;

/** JSON copy: what the API server can be expected to give back. */
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The status and message of a refused call; fails the test if the call succeeded. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === 'string' ? (JSON.parse(err.body) as { message?: string }) : (err.body as { message?: string });
      return { code: err.code, message: body?.message ?? String(err.body) };
    }
    throw err;
  }
  throw new Error('the API server accepted a document it should have refused');
}

/**
 * CRDs are applied and read through the generic custom-object client on purpose: it sends and
 * returns plain JSON. The typed apiextensions client maps schema keys to model names and drops
 * the `x-kubernetes-*` ones on the way, which would test a different schema than crds/ holds.
 */
const CRD_API = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions' };

async function applyCrd(custom: CustomObjectsApi, crd: Doc): Promise<void> {
  await custom.patchClusterCustomObject(
    { ...CRD_API, name: crd.metadata.name, body: crd, fieldManager: 'plugflow-crds-test', force: true },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}

async function readCrd(custom: CustomObjectsApi, name: string): Promise<Doc> {
  return (await custom.getClusterCustomObject({ ...CRD_API, name })) as Doc;
}

async function waitEstablished(custom: CustomObjectsApi, name: string): Promise<Doc> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const crd = await readCrd(custom, name);
    const established = (crd.status?.conditions ?? []).some((c: Doc) => c.type === 'Established' && c.status === 'True');
    if (established) return crd;
    if (Date.now() > deadline) throw new Error(`CRD ${name} is not Established: ${JSON.stringify(crd.status?.conditions)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** GET as a server-side Table, the form `kubectl get` prints. */
async function getTable(
  kc: KubeConfig,
  path: string,
): Promise<{ columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> }> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const opts: RequestOptions = {
    hostname: server.hostname,
    port: server.port,
    path,
    method: 'GET',
    headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(opts, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('plugflow CRDs on a real API server', () => {
  const kc = adminKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  let ns = '';
  const clusterObjects: string[] = [];

  const create = (plural: string, body: Doc) =>
    custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural, body });
  const get = (plural: string, name: string) =>
    custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural, name }) as Promise<Doc>;

  beforeAll(async () => {
    ns = await createTestNamespace('crds');
  });

  afterAll(async () => {
    for (const name of clusterObjects) {
      await custom
        .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL.clusterWorkflowTemplate, name })
        .catch(() => {});
    }
    if (ns) await deleteTestNamespace(ns);
  });

  it('accepts every CRD in crds/, establishes it and stores its schema unchanged', async () => {
    const crds = loadCrds() as Doc[];
    expect(crds.map((c) => c.metadata.name).sort()).toEqual(
      crdDefinitions()
        .map((c) => c.metadata.name)
        .sort(),
    );
    // Idempotent: the global setup applied them already; applying again must be accepted.
    for (const crd of crds) await applyCrd(custom, crd);
    for (const crd of crds) {
      const live = await waitEstablished(custom, crd.metadata.name);
      const conditions = Object.fromEntries((live.status?.conditions ?? []).map((c: Doc) => [c.type, c.status]));
      expect(conditions, crd.metadata.name).toMatchObject({ Established: 'True', NamesAccepted: 'True' });
      expect(conditions.NonStructuralSchema, crd.metadata.name).toBeUndefined();
      expect(live.spec.versions[0].schema.openAPIV3Schema).toEqual(crd.spec.versions[0].schema.openAPIV3Schema);
      expect(live.spec.names).toMatchObject(crd.spec.names);
      expect(live.spec.scope).toBe(crd.spec.scope);
    }
  });

  it('serves the resources with their short names, scope and the plugflow category', async () => {
    const list = await custom.getAPIResources({ group: GROUP, version: VERSION });
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    for (const [plural, short, namespaced] of [
      ['workflows', 'wf', true],
      ['workflowtemplates', 'wftmpl', true],
      ['clusterworkflowtemplates', 'cwftmpl', false],
      ['workfloweventbindings', 'wfeb', true],
      ['workflowtasksets', 'wfts', true],
    ] as const) {
      const r = byName.get(plural);
      expect(r, plural).toBeDefined();
      expect(r!.shortNames).toEqual([short]);
      expect(r!.categories).toEqual(['plugflow']);
      expect(r!.namespaced).toBe(namespaced);
    }
    // Status and its labels go in one write (docs/workflow-status.md); a policy guards the status.
    expect(byName.has('workflows/status')).toBe(false);
    expect(byName.has('workflowtasksets/status')).toBe(true);
    expect(byName.has('workflowtemplates/status')).toBe(false);
  });

  it('round-trips a Workflow that uses every template kind unchanged', async () => {
    const sent = json(workflowWithEveryTemplateKind('every-kind'));
    await create(PLURAL.workflow, sent);
    const got = await get(PLURAL.workflow, 'every-kind');
    expect(got.spec).toEqual(sent.spec);
    expect(got.metadata.labels).toEqual(sent.metadata.labels);
  });

  it('round-trips WorkflowTemplate, ClusterWorkflowTemplate, WorkflowEventBinding and WorkflowTaskSet', async () => {
    const template = json({ ...workflowWithEveryTemplateKind('library'), kind: 'WorkflowTemplate' });
    await create(PLURAL.workflowTemplate, template);
    expect((await get(PLURAL.workflowTemplate, 'library')).spec).toEqual(template.spec);

    const clusterName = `${ns}-library`;
    const clusterTemplate = json({ ...workflowWithEveryTemplateKind(clusterName), kind: 'ClusterWorkflowTemplate' });
    await custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL.clusterWorkflowTemplate,
      body: clusterTemplate,
    });
    clusterObjects.push(clusterName);
    const gotCluster = (await custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL.clusterWorkflowTemplate,
      name: clusterName,
    })) as Doc;
    expect(gotCluster.spec).toEqual(clusterTemplate.spec);
    expect(gotCluster.metadata.namespace).toBeUndefined();

    const binding = json(sampleEventBinding('on-push'));
    await create(PLURAL.workflowEventBinding, binding);
    expect((await get(PLURAL.workflowEventBinding, 'on-push')).spec).toEqual(binding.spec);

    const taskSet = json(sampleTaskSet('every-kind'));
    await create(PLURAL.workflowTaskSet, taskSet);
    const gotTaskSet = await get(PLURAL.workflowTaskSet, 'every-kind');
    expect(gotTaskSet.spec).toEqual(taskSet.spec);
    // Status is a subresource: ignored on create, written through /status.
    expect(gotTaskSet.status).toBeUndefined();
    const withStatus = await custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL.workflowTaskSet,
      name: 'every-kind',
      body: { ...gotTaskSet, status: taskSet.status },
    });
    expect((withStatus as Doc).status).toEqual(taskSet.status);
    expect((await get(PLURAL.workflowTaskSet, 'every-kind')).status).toEqual(taskSet.status);
  });

  it('keeps workflow status in the workflow itself (one write with its labels) and prints phase, age and message', async () => {
    const wf = json(workflowWithEveryTemplateKind('printed'));
    await create(PLURAL.workflow, wf);
    const created = await get(PLURAL.workflow, 'printed');
    expect(created.status?.phase).toBeUndefined();
    // What the controller sends: status and phase label in one conditional patch of the workflow.
    await custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: PLURAL.workflow,
        name: 'printed',
        body: {
          metadata: { resourceVersion: created.metadata.resourceVersion, labels: { 'workflows.plugflow.io/phase': 'Running' } },
          status: { phase: 'Running', message: 'step 2 of 3', nodes: {} },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const patched = await get(PLURAL.workflow, 'printed');
    expect(patched.metadata.labels?.['workflows.plugflow.io/phase']).toBe('Running');
    expect(patched.status?.phase).toBe('Running');
    const table = await getTable(kc, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL.workflow}/printed`);
    const columns = table.columnDefinitions.map((c) => c.name);
    expect(columns).toEqual(['Name', 'Phase', 'Age', 'Message']);
    const [name, phase, , message] = table.rows[0]!.cells;
    expect([name, phase, message]).toEqual(['printed', 'Running', 'step 2 of 3']);
  });

  describe('refuses documents with a wrong field and names the field', () => {
    /** The sample workflow, renamed and changed by `edit`. */
    const broken = (name: string, edit: (wf: Doc) => void): Doc => {
      const wf = json(workflowWithEveryTemplateKind(name)) as Doc;
      edit(wf);
      return wf;
    };

    it.each<[string, (wf: Doc) => void, string[]]>([
      [
        'a plugin section with two keys',
        (wf) => (wf.spec.templates[7].plugin = { a: {}, b: {} }),
        ['spec.templates[7].plugin', 'at most 1'],
      ],
      ['an empty plugin section', (wf) => (wf.spec.templates[7].plugin = {}), ['spec.templates[7].plugin', 'at least 1']],
      ['a template without a name', (wf) => delete wf.spec.templates[4].name, ['spec.templates[4].name', 'Required value']],
      ['a template name with an underscore', (wf) => (wf.spec.templates[4].name = 'my_step'), ['spec.templates[4].name', 'should match']],
      ['two templates with the same name', (wf) => (wf.spec.templates[4].name = 'main'), ['spec.templates[4]', 'Duplicate value']],
      [
        'a bad retryPolicy',
        (wf) => (wf.spec.templates[1].retryStrategy.retryPolicy = 'Sometimes'),
        ['spec.templates[1].retryStrategy.retryPolicy', 'Unsupported value: "Sometimes"'],
      ],
      [
        'a bad resource action',
        (wf) => (wf.spec.templates[5].resource.action = 'upsert'),
        ['spec.templates[5].resource.action', 'Unsupported value'],
      ],
      [
        'a template with two kinds',
        (wf) => (wf.spec.templates[2].container = { image: 'busybox' }),
        ['spec.templates[2]', 'must have exactly one of container, script, dag'],
      ],
      ['a template with no kind', (wf) => delete wf.spec.templates[4].suspend, ['spec.templates[4]', 'must have exactly one of']],
      ['an entrypoint that is a list', (wf) => (wf.spec.entrypoint = ['main']), ['spec.entrypoint', 'string']],
      [
        'a DAG task without a name',
        (wf) => delete wf.spec.templates[0].dag.tasks[3].name,
        ['spec.templates[0].dag.tasks[3].name', 'Required value'],
      ],
      ['a fractional retry limit', (wf) => (wf.spec.templates[1].retryStrategy.limit = 1.5), ['spec.templates[1].retryStrategy.limit']],
      ['an http template without a url', (wf) => delete wf.spec.templates[6].http.url, ['spec.templates[6].http.url', 'Required value']],
    ])('%s', async (_what, edit, expected) => {
      const name = `bad-${Math.random().toString(36).slice(2, 8)}`;
      const { code, message } = await refusal(create(PLURAL.workflow, broken(name, edit)));
      expect(code).toBe(422);
      expect(message).toContain(`"${name}" is invalid`);
      for (const part of expected) expect(message).toContain(part);
    });

    it('a binding without a selector or template name', async () => {
      const binding = json(sampleEventBinding('broken-binding')) as Doc;
      delete binding.spec.event.selector;
      delete binding.spec.submit.workflowTemplateRef.name;
      const { code, message } = await refusal(create(PLURAL.workflowEventBinding, binding));
      expect(code).toBe(422);
      expect(message).toContain('spec.event.selector: Required value');
      expect(message).toContain('spec.submit.workflowTemplateRef.name: Required value');
    });
  });
});
