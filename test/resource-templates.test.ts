/**
 * Resource templates on the real API server, with RBAC on: the controller runs under its own
 * service account (manifests/base/rbac-controller.yaml) and acts on objects only as the step's
 * service account, whose Role here allows ConfigMaps and nothing else.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMPERSONATE_CLUSTER_ROLE, type Template, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { impersonationBinding } from '../src/devenv/dev-stack.js';
import { applyObjects, readManifests } from '../src/kube/apply.js';
import { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { readYamlDocument } from '../src/yaml/kube-yaml.js';
import { CONFIGMAPS, ROLE_BINDINGS, ROLES, SERVICE_ACCOUNTS, WORKFLOWS, type ResourceType } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';

const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true };

type ConfigMap = {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string }[] };
  data?: Record<string, string>;
};

function resourceFlow(name: string, templates: Template[], serviceAccountName = 'cm-maker'): Workflow {
  return workflow(name, { entrypoint: 'main', serviceAccountName, templates });
}

describe('resource templates', () => {
  let ns: string;
  let client: KubeClient;
  let controller: RunningController;
  const { log } = captureLogger();

  const start = async (): Promise<RunningController> => {
    const token = await eventually(() => serviceAccountToken('plugflow', 'plugflow-controller'), 'a controller token');
    return startController({
      kubeConfig: kubeConfigForToken(token, 'plugflow-controller'),
      namespace: ns,
      installNamespace: 'plugflow',
      processMetrics: false,
      log,
    });
  };

  beforeAll(async () => {
    const admin = adminKubeConfig();
    await applyObjects(admin, [
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'namespace.yaml')),
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'rbac-controller.yaml')),
    ]);
    ns = await createTestNamespace('resource');
    client = await KubeClient.fromKubeConfig(admin);
    await client.create(SERVICE_ACCOUNTS, ns, { metadata: { name: 'cm-maker' } });
    await client.create(ROLES, ns, {
      metadata: { name: 'cm-maker' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] }],
    });
    await client.create(ROLE_BINDINGS, ns, {
      metadata: { name: 'cm-maker' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-maker' },
      subjects: [{ kind: 'ServiceAccount', name: 'cm-maker', namespace: ns }],
    });
    // What README "Install" has each namespace that runs workflows grant: the controller may act as its accounts.
    await client.create(ROLE_BINDINGS, ns, impersonationBinding(ns));
    controller = await start();
  }, 180_000);

  afterAll(async () => {
    await controller?.stop();
    await client?.close();
    await deleteTestNamespace(ns);
  });

  it('creates, patches, waits for and deletes objects, with outputs from jsonPath, jqFilter and the result', async () => {
    const wf = resourceFlow('cm-life', [
      {
        name: 'main',
        steps: [
          [{ name: 'create', template: 'create' }],
          [
            {
              name: 'patch',
              template: 'patch',
              arguments: { parameters: [{ name: 'cm', value: '{{steps.create.outputs.parameters.name}}' }] },
            },
          ],
          [
            {
              name: 'wait',
              template: 'wait',
              arguments: { parameters: [{ name: 'cm', value: '{{steps.create.outputs.parameters.name}}' }] },
            },
          ],
          [{ name: 'delete', template: 'delete' }],
        ],
      },
      {
        name: 'create',
        resource: {
          action: 'create',
          setOwnerReference: true,
          manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: life-\n  labels: {test: life}\ndata:\n  colour: blue\n',
        },
        outputs: {
          parameters: [
            { name: 'name', valueFrom: { jsonPath: '{.metadata.name}' } },
            { name: 'data', valueFrom: { jqFilter: '.data' } },
            { name: 'colour', valueFrom: { jqFilter: '.data.colour' } },
            // Declared without a source: the object's own (as the peer names them).
            { name: 'resourceKind' },
            { name: 'resourceName' },
          ],
        },
      },
      {
        name: 'patch',
        inputs: { parameters: [{ name: 'cm' }] },
        resource: {
          action: 'patch',
          mergeStrategy: 'merge',
          flags: ['configmap', '{{inputs.parameters.cm}}'],
          manifest: 'data:\n  size: large\n',
        },
        outputs: { parameters: [{ name: 'size', valueFrom: { jsonPath: '{.data.size}' } }] },
      },
      {
        name: 'wait',
        inputs: { parameters: [{ name: 'cm' }] },
        resource: {
          action: 'get',
          successCondition: 'data.ready == yes',
          manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{inputs.parameters.cm}}\n',
        },
      },
      { name: 'delete', resource: { action: 'delete', flags: ['configmap', '-l', 'test=life'] } },
    ]);
    const created = await client.create<Workflow & { metadata: { uid: string } }>(WORKFLOWS, ns, wf);
    // The get waits until something makes its condition hold.
    const running = await eventually(async () => {
      const w = await client.get<Workflow>(WORKFLOWS, ns, 'cm-life');
      const node = Object.values(w.status?.nodes ?? {}).find((n) => n.displayName === 'wait');
      return node?.phase === 'Running' && node.resourceObject ? w : undefined;
    }, 'the wait step to be running');
    const cmName = Object.values(running.status!.nodes!).find((n) => n.displayName === 'create')!.outputs!.parameters![0]!.value as string;
    expect(cmName).toMatch(/^life-/);
    const cm = await client.get<ConfigMap>(CONFIGMAPS, ns, cmName);
    expect(cm.data).toEqual({ colour: 'blue', size: 'large' });
    expect(cm.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Workflow', name: 'cm-life', uid: created.metadata.uid }),
    ]);
    await client.mergePatch(CONFIGMAPS, ns, cmName, { data: { ready: 'yes' } });

    const done = await waitForCompletion(client, ns, 'cm-life', 60_000);
    expect(done.status?.phase).toBe('Succeeded');
    const nodes = Object.values(done.status!.nodes!);
    const byName = (n: string) => nodes.find((x) => x.displayName === n)!;
    expect(byName('create')).toMatchObject({ type: 'Resource', phase: 'Succeeded' });
    expect(byName('create').outputs).toEqual({
      result: `configmap/${cmName}`,
      parameters: [
        { name: 'name', value: cmName },
        { name: 'data', value: '{"colour":"blue"}' },
        { name: 'colour', value: 'blue' },
        { name: 'resourceKind', value: 'ConfigMap' },
        { name: 'resourceName', value: cmName },
      ],
    });
    expect(byName('patch').outputs?.parameters).toEqual([{ name: 'size', value: 'large' }]);
    await expect(client.get(CONFIGMAPS, ns, cmName)).rejects.toSatisfy(isNotFound);
  }, 120_000);

  it("acts with the step's service account's rights, never the controller's", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      resourceFlow('no-jobs', [
        {
          name: 'main',
          resource: {
            action: 'create',
            manifest:
              'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: forbidden-job\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: alpine, command: [true]}]\n',
          },
        },
      ]),
    );
    // The account without a Role: not even ConfigMaps.
    await client.create(
      WORKFLOWS,
      ns,
      resourceFlow(
        'no-rights',
        [{ name: 'main', resource: { action: 'create', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-made\n' } }],
        'default',
      ),
    );
    const jobs = await waitForCompletion(client, ns, 'no-jobs', 60_000);
    expect(jobs.status?.phase).toBe('Failed');
    const jobNode = Object.values(jobs.status!.nodes!)[0]!;
    expect(jobNode.message).toContain(`User "system:serviceaccount:${ns}:cm-maker" cannot create resource "jobs"`);
    await expect(client.get(JOBS, ns, 'forbidden-job')).rejects.toSatisfy(isNotFound);

    const none = await waitForCompletion(client, ns, 'no-rights', 60_000);
    expect(none.status?.phase).toBe('Failed');
    expect(Object.values(none.status!.nodes!)[0]!.message).toContain(
      `User "system:serviceaccount:${ns}:default" cannot create resource "configmaps"`,
    );
    await expect(client.get(CONFIGMAPS, ns, 'not-made')).rejects.toSatisfy(isNotFound);
  }, 120_000);

  it('acts as no account of a namespace that has not granted it, saying which binding is missing', async () => {
    await client.delete(ROLE_BINDINGS, ns, IMPERSONATE_CLUSTER_ROLE);
    try {
      await client.create(
        WORKFLOWS,
        ns,
        resourceFlow('not-granted', [
          { name: 'main', resource: { action: 'create', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-granted\n' } },
        ]),
      );
      const wf = await waitForCompletion(client, ns, 'not-granted', 60_000);
      expect(wf.status?.phase).toBe('Failed');
      expect(Object.values(wf.status!.nodes!)[0]!.message).toBe(
        `the controller may not act as service account ${ns}/cm-maker: bind ClusterRole ${IMPERSONATE_CLUSTER_ROLE} to the controller's account in namespace ${ns} (README "Install")`,
      );
      await expect(client.get(CONFIGMAPS, ns, 'not-granted')).rejects.toSatisfy(isNotFound);
    } finally {
      await client.create(ROLE_BINDINGS, ns, impersonationBinding(ns));
    }
  }, 90_000);

  it('fails the step when its failure condition holds, naming it', async () => {
    await client.create(CONFIGMAPS, ns, { metadata: { name: 'gate' }, data: { state: 'pending' } });
    await client.create(
      WORKFLOWS,
      ns,
      resourceFlow('gate-fails', [
        {
          name: 'main',
          resource: {
            action: 'get',
            flags: ['cm', 'gate'],
            successCondition: 'data.state == done',
            failureCondition: 'data.state in (bad, broken)',
          },
        },
      ]),
    );
    await eventually(async () => {
      const w = await client.get<Workflow>(WORKFLOWS, ns, 'gate-fails');
      return Object.values(w.status?.nodes ?? {})[0]?.phase === 'Running' || undefined;
    }, 'the gate step to run');
    await client.mergePatch(CONFIGMAPS, ns, 'gate', { data: { state: 'broken' } });
    const done = await waitForCompletion(client, ns, 'gate-fails', 60_000);
    expect(done.status?.phase).toBe('Failed');
    expect(Object.values(done.status!.nodes!)[0]!.message).toBe('failure condition "data.state in (bad, broken)" holds for configmap/gate');
  }, 120_000);

  it('names the group, version and kind the API server does not serve, and the CRD that may be missing', async () => {
    const make = (v: string): Template => ({ name: 'main', resource: { action: 'create', manifest: `apiVersion: ${v}\nkind: Widget\n` } });
    await client.create(WORKFLOWS, ns, resourceFlow('no-group', [make('widgets.example.com/v1')]));
    await client.create(WORKFLOWS, ns, resourceFlow('no-kind', [make('batch/v1')]));
    const message = async (name: string) => Object.values((await waitForCompletion(client, ns, name, 60_000)).status!.nodes!)[0]!.message;
    expect(await message('no-group')).toBe(
      'the API server does not serve widgets.example.com/v1 (group "widgets.example.com", version "v1"), so it has no kind Widget: ' +
        'the CustomResourceDefinition that defines it may be missing',
    );
    expect(await message('no-kind')).toBe('the API server serves no kind Widget in batch/v1 (is its CustomResourceDefinition installed?)');
  }, 120_000);

  it('applies and replaces objects', async () => {
    const manifest = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  v: "${v}"\n`;
    await client.create(
      WORKFLOWS,
      ns,
      resourceFlow('apply-replace', [
        { name: 'main', steps: [[{ name: 'a1', template: 'a1' }], [{ name: 'a2', template: 'a2' }], [{ name: 'r', template: 'r' }]] },
        { name: 'a1', resource: { action: 'apply', manifest: manifest('1') } },
        {
          name: 'a2',
          resource: { action: 'apply', manifest: manifest('2') },
          outputs: { parameters: [{ name: 'v', valueFrom: { jsonPath: '{.data.v}' } }] },
        },
        { name: 'r', resource: { action: 'replace', manifest: manifest('3') } },
      ]),
    );
    const done = await waitForCompletion(client, ns, 'apply-replace', 60_000);
    expect(done.status?.phase).toBe('Succeeded');
    expect(Object.values(done.status!.nodes!).find((n) => n.displayName === 'a2')!.outputs!.parameters).toEqual([
      { name: 'v', value: '2' },
    ]);
    expect((await client.get<ConfigMap>(CONFIGMAPS, ns, 'applied')).data).toEqual({ v: '3' });
  }, 120_000);

  it('a restarted controller waits for the object it created instead of creating another', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      resourceFlow('restart', [
        {
          name: 'main',
          resource: {
            action: 'create',
            successCondition: 'data.go == yes',
            manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: once-\n  labels: {test: once}\ndata: {}\n',
          },
        },
      ]),
    );
    const waiting = await eventually(async () => {
      const w = await client.get<Workflow>(WORKFLOWS, ns, 'restart');
      return Object.values(w.status?.nodes ?? {})[0]?.resourceObject;
    }, 'the created object to be recorded');
    await controller.stop();
    controller = await start();
    await client.mergePatch(CONFIGMAPS, ns, waiting.name, { data: { go: 'yes' } });
    const done = await waitForCompletion(client, ns, 'restart', 60_000);
    expect(done.status?.phase).toBe('Succeeded');
    const made = await client.list<ConfigMap>(CONFIGMAPS, { namespace: ns, labelSelector: 'test=once' });
    expect(made.items.map((c) => c.metadata.name)).toEqual([waiting.name]);
  }, 120_000);
});

describe('the examples in examples/resource run unchanged (with their rbac.yaml applied)', () => {
  const dir = join(REPO_ROOT, 'examples', 'resource');
  let ns: string;
  let client: KubeClient;
  let controller: RunningController;
  // A pod runner: manifest-from-artifact.yaml fetches its manifest in a pod.
  let bed: RunnerBed;
  const { log } = captureLogger();

  beforeAll(async () => {
    const admin = adminKubeConfig();
    bed = await startRunnerBed('resource-ex');
    ({ ns, client } = bed);
    await applyObjects(admin, [
      ...readManifests(join(dir, 'rbac.yaml')).map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } })),
      impersonationBinding(ns) as KubernetesObject,
    ]);
    controller = await startController({
      kubeConfig: kubeConfigForToken(await serviceAccountToken('plugflow', 'plugflow-controller'), 'plugflow-controller'),
      namespace: ns,
      installNamespace: 'plugflow',
      processMetrics: false,
      log,
    });
  }, 120_000);

  afterAll(async () => {
    await controller?.stop();
    await bed?.stop();
  });

  // What each example leaves behind that proves it did its work.
  const proof: Record<string, (wf: Workflow) => Promise<void>> = {
    'configmap-outputs.yaml': async (wf) => {
      const show = Object.values(wf.status!.nodes!).find((n) => n.displayName === 'show')!;
      const text = show.outputs!.parameters![0]!.value as string;
      expect(text).toMatch(new RegExp(`^(made-by-${wf.metadata.name}-\\w+) large configmap/\\1$`));
    },
    'delete-with-flags.yaml': async (wf) => {
      await expect(client.get(CONFIGMAPS, ns, wf.metadata.name!)).rejects.toSatisfy(isNotFound);
    },
    'manifest-from-artifact.yaml': async (wf) => {
      const apply = Object.values(wf.status!.nodes!).find((n) => n.displayName === 'apply')!;
      expect(apply.outputs?.parameters).toContainEqual({ name: 'colour', value: 'green' });
      // outputs.result is the object's kubectl name: configmap/from-artifact-xxxxx.
      const made = (apply.outputs?.result ?? '').replace(/^configmap\//, '');
      expect((await client.get<ConfigMap>(CONFIGMAPS, ns, made)).data).toEqual({ colour: 'green' });
    },
    'patch-merge.yaml': async (wf) => {
      expect((await client.get<ConfigMap>(CONFIGMAPS, ns, wf.metadata.name!)).data).toEqual({ a: '1', b: '2', c: '3' });
    },
  };
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'rbac.yaml')) {
    it(
      file,
      async () => {
        expect(file in proof, `add what ${file} proves to the table above`).toBe(true);
        const wf = readYamlDocument(readFileSync(join(dir, file), 'utf8'), file) as Workflow;
        const created = await client.create<Workflow>(WORKFLOWS, ns, { ...wf, metadata: { ...wf.metadata, namespace: ns } });
        const done = await waitForCompletion(client, ns, created.metadata.name!, 60_000);
        const nodes = Object.values(done.status?.nodes ?? {}).map((n) => [n.displayName, n.phase, n.message]);
        expect(done.status?.phase, JSON.stringify(nodes)).toBe('Succeeded');
        await proof[file]!(done);
      },
      90_000,
    );
  }
});
