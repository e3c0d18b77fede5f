/**
 * The controller runs within the rights manifests/base/rbac-controller.yaml gives it: started
 * with the plugflow-controller service account's token (RBAC enforced by the real API server),
 * with leader election and executor plugins on, it runs a step pod to Succeeded and sets up a
 * plugin step's TaskSet and agent pod, and a workflow using the workflow-level fields that make
 * the controller write other objects (workflowMetadata, volumeClaimTemplates, podDisruptionBudget,
 * podGC, ttlStrategy deleting it, memoize creating its cache) — without a single refused request.
 * Its /metrics, which carries tenants' label values, is read by an account bound to the
 * plugflow-metrics-reader ClusterRole and by nobody else, asked with the controller's own rights.
 */
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { applyObjects, readManifests } from '../src/kube/apply.js';
import { KubeClient } from '../src/kube/client.js';
import { isNotFound } from '../src/kube/errors.js';
import { CONFIGMAPS, PODS, WORKFLOWS, WORKFLOW_TASK_SETS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { AGENT_SERVICE_ACCOUNT, buildPlugin } from '../src/plugins/index.js';
import { PodRunner } from '../src/runner/runner.js';
import { captureLogger, eventually, oneStep, waitForCompletion, workflow } from './controller-harness.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';

describe('controller under its own RBAC', () => {
  let ns: string;
  let client: KubeClient;
  let runner: PodRunner;
  let controller: RunningController;
  const { log, lines } = captureLogger();

  beforeAll(async () => {
    const admin = adminKubeConfig();
    await applyObjects(admin, [
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'namespace.yaml')),
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'rbac-controller.yaml')),
    ]);
    ns = await createTestNamespace('ctl-rbac');
    client = await KubeClient.fromKubeConfig(admin);
    const core = admin.makeApiClient(CoreV1Api);
    await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }), 'the default service account');
    // What a namespace running plugin steps has (README "Pod security"): the agent's own account.
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: AGENT_SERVICE_ACCOUNT } } });
    runner = new PodRunner({
      kubeConfig: admin,
      dir: mkdtempSync(join(tmpdir(), 'plugflow-rbac-runner-')),
      nodeName: `runner-${ns}`,
      namespace: ns,
      log: createLogger('runner', 'warn'),
    });
    await runner.start();
    const token = await eventually(() => serviceAccountToken('plugflow', 'plugflow-controller'), 'a controller token');
    controller = await startController({
      kubeConfig: kubeConfigForToken(token, 'plugflow-controller'),
      namespace: ns,
      installNamespace: 'plugflow',
      leaderElect: true,
      leaseName: `controller-${ns}`,
      pluginsEnabled: true,
      processMetrics: false,
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      log,
    });
  }, 180_000);

  afterAll(async () => {
    await controller?.stop();
    await runner?.stop(1);
    await adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .deleteNode({ name: `runner-${ns}` })
      .catch(() => {});
    await client?.close();
    await deleteTestNamespace(ns);
  });

  it('runs a step pod and a plugin step set-up with no request refused', async () => {
    const plugin = buildPlugin({
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'ExecutorPlugin',
      metadata: { name: 'hello' },
      spec: {
        sidecar: {
          container: {
            name: 'hello',
            image: 'python:3.11-alpine',
            command: ['python3', '-c', 'print(1)'],
            ports: [{ containerPort: 4355 }],
            resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
            securityContext: { runAsNonRoot: true, runAsUser: 65534 },
          },
        },
      },
    } as Parameters<typeof buildPlugin>[0]).configMap;
    await client.create(CONFIGMAPS, ns, plugin);
    await eventually(() => lines.some((l) => l.message === 'Executor plugin added' && l.namespace === ns), 'plugin discovered');

    await client.create(WORKFLOWS, ns, oneStep('rbac-one'));
    expect((await waitForCompletion(client, ns, 'rbac-one')).status?.phase).toBe('Succeeded');

    await client.create(
      WORKFLOWS,
      ns,
      workflow('rbac-plugin', { entrypoint: 'p', templates: [{ name: 'p', plugin: { hello: {} } }] } as Workflow['spec']),
    );
    await eventually(() => client.get(WORKFLOW_TASK_SETS, ns, 'rbac-plugin'), 'the TaskSet');
    await eventually(() => client.get(PODS, ns, 'rbac-plugin-agent'), 'the agent pod');

    await client.create(
      WORKFLOWS,
      ns,
      workflow('rbac-fields', {
        entrypoint: 'main',
        ttlStrategy: { secondsAfterSuccess: 0 },
        podGC: { strategy: 'OnPodCompletion' },
        workflowMetadata: { labels: { rbac: 'yes' } },
        podDisruptionBudget: { minAvailable: 1 },
        volumeClaimTemplates: [
          { metadata: { name: 'work' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } },
        ],
        templates: [
          {
            name: 'main',
            memoize: { key: 'rbac', maxAge: '1h', cache: { configMap: { name: 'rbac-memo' } } },
            container: { image: 'alpine:3', command: ['true'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
          },
        ],
      }),
    );
    await eventually(
      () =>
        client.get(WORKFLOWS, ns, 'rbac-fields').then(
          () => undefined,
          (err: unknown) => {
            if (isNotFound(err)) return true;
            throw err;
          },
        ),
      'rbac-fields deleted by its ttlStrategy',
    );
    // memoize: the controller created the cache ConfigMap with the entry.
    const cache = await client.get<{ data?: Record<string, string> }>(CONFIGMAPS, ns, 'rbac-memo');
    expect(Object.keys(cache.data ?? {})).toEqual(['rbac']);

    const errors = await controller.metrics.apiErrors.get();
    const refused = errors.values.filter((v) => v.labels.code === '401' || v.labels.code === '403');
    expect(refused, JSON.stringify(refused)).toEqual([]);
  });

  it('serves /metrics to an account bound to plugflow-metrics-reader, and to no other', async () => {
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'scraper' } } });
    await applyObjects(adminKubeConfig(), [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `plugflow-metrics-reader-${ns}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'plugflow-metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
      } as KubernetesObject,
    ]);
    const scrape = async (token: string) =>
      fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const scraper = await serviceAccountToken(ns, 'scraper');
    const allowed = await eventually(async () => {
      const res = await scrape(scraper);
      return res.status === 200 ? res.text() : undefined;
    }, 'the scraper allowed');
    expect(allowed).toContain('plugflow_controller_queue_depth');
    const tenant = await scrape(await serviceAccountToken(ns, 'default'));
    expect(tenant.status).toBe(403);
    expect(await tenant.text()).toContain(`system:serviceaccount:${ns}:default may not get the non-resource URL /metrics`);
    await core.deleteNamespacedServiceAccount({ name: 'scraper', namespace: ns });
  });
});
