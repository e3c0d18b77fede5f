/**
 * `resource.manifestFrom.artifact` on real parts: the real API server with RBAC on, the
 * controller under its installed ClusterRole, the local pod runner running the real init,
 * emissary and wait programs. A pod of the step's own fetches the input artifact and prints it;
 * the controller applies it as the step's service account — from the pod's report when it fits
 * there, from the pod's log when it does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Template } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { impersonationBinding } from '../src/devenv/dev-stack.js';
import { applyObjects, readManifests } from '../src/kube/apply.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, PODS, ROLE_BINDINGS, ROLES, SERVICE_ACCOUNTS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';

let bed: RunnerBed;
let ns: string;
let client: KubeClient;
let controller: RunningController;
const { log } = captureLogger();

/** A ConfigMap manifest whose data.text holds about `size` bytes, and that text as the API server will store it. */
function configMap(name: string, size: number): { manifest: string; text: string } {
  const line = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2);
  const lines = Array.from({ length: Math.ceil(size / (line.length + 4)) }, (_, i) => `${i}-${line}`);
  const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  text: |\n${lines.map((l) => `    ${l}\n`).join('')}`;
  return { manifest, text: `${lines.join('\n')}\n` };
}

/** A step template that creates what its input artifact `manifest` holds, as account `sa`. */
const fromArtifact = (name: string, source: Record<string, unknown>, sa = 'cm-maker'): Template =>
  ({
    name,
    serviceAccountName: sa,
    inputs: { artifacts: [{ name: 'manifest', path: '/tmp/manifest.yaml', ...source }] },
    resource: { action: 'create', manifestFrom: { artifact: { name: 'manifest' } } },
    outputs: { parameters: [{ name: 'made', valueFrom: { jsonPath: '{.metadata.name}' } }] },
  }) as Template;

beforeAll(async () => {
  await applyObjects(adminKubeConfig(), [
    ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'namespace.yaml')),
    ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'rbac-controller.yaml')),
  ]);
  bed = await startRunnerBed('manifest-from');
  ({ ns, client } = bed);
  await client.create(SERVICE_ACCOUNTS, ns, { metadata: { name: 'cm-maker' } });
  await client.create(ROLES, ns, {
    metadata: { name: 'cm-maker' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create'] }],
  });
  await client.create(ROLE_BINDINGS, ns, {
    metadata: { name: 'cm-maker' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-maker' },
    subjects: [{ kind: 'ServiceAccount', name: 'cm-maker', namespace: ns }],
  });
  await client.create(ROLE_BINDINGS, ns, impersonationBinding(ns));
  const token = await eventually(() => serviceAccountToken('plugflow', 'plugflow-controller'), 'a controller token');
  controller = await startController({
    kubeConfig: kubeConfigForToken(token, 'plugflow-controller'),
    namespace: ns,
    installNamespace: 'plugflow',
    processMetrics: false,
    workers: 2,
    log,
  });
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('resource.manifestFrom.artifact', () => {
  it("applies a manifest that a pod of the step's own fetched — a small one from its report, a large one from its log", async () => {
    const small = configMap('small-from-artifact', 300);
    const large = configMap('large-from-artifact', 20_000);
    expect(Buffer.byteLength(large.manifest)).toBeGreaterThan(16_000); // far over the 4 KiB termination message
    await client.create(
      WORKFLOWS,
      ns,
      workflow('manifests', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'small', template: 'small' },
                // The artifact comes as an argument, as the peer's examples pass it.
                { name: 'large', template: 'create', arguments: { artifacts: [{ name: 'manifest', raw: { data: large.manifest } }] } },
              ],
            ],
          },
          fromArtifact('small', { raw: { data: small.manifest } }),
          { ...fromArtifact('create', {}), inputs: { artifacts: [{ name: 'manifest', path: '/work/manifest.yaml' }] } },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'manifests', 90_000);
    const nodes = Object.values(done.status?.nodes ?? {});
    expect(done.status?.phase, JSON.stringify(nodes.map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    for (const [step, cm, text] of [
      ['small', 'small-from-artifact', small],
      ['large', 'large-from-artifact', large],
    ] as const) {
      const node = nodes.find((n) => n.displayName === step)!;
      expect(node).toMatchObject({
        type: 'Resource',
        phase: 'Succeeded',
        outputs: { parameters: [expect.objectContaining({ name: 'made', value: cm })] },
      });
      // The pod that fetched it ran as the step's account, with no token.
      const pod = await client.get<{ spec: { serviceAccountName: string; automountServiceAccountToken?: boolean } }>(
        PODS,
        ns,
        node.podName!,
      );
      expect(pod.spec.serviceAccountName).toBe('cm-maker');
      expect(pod.spec.automountServiceAccountToken).toBe(false);
      const made = await client.get<{ data: Record<string, string> }>(CONFIGMAPS, ns, cm);
      expect(made.data.text).toBe(text.text);
    }
  }, 120_000);

  it("acts with the step's service account's rights: a Job from an artifact is refused for an account that may make only ConfigMaps", async () => {
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: not-allowed\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: alpine, command: ["true"]}]\n';
    await client.create(
      WORKFLOWS,
      ns,
      workflow('no-jobs', { entrypoint: 'main', templates: [fromArtifact('main', { raw: { data: job } })] }),
    );
    const done = await waitForCompletion(client, ns, 'no-jobs', 90_000);
    expect(done.status?.phase).toBe('Failed');
    const node = Object.values(done.status!.nodes!)[0]!;
    expect(node.message).toMatch(/forbidden/i);
    expect(node.message).toContain(`system:serviceaccount:${ns}:cm-maker`);
  }, 120_000);

  it('fails the step, naming the artifact, when its pod cannot fetch it', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('unfetchable', {
        entrypoint: 'main',
        templates: [fromArtifact('main', { http: { url: 'http://127.0.0.1:9/manifest.yaml' } })],
      }),
    );
    const done = await waitForCompletion(client, ns, 'unfetchable', 90_000);
    expect(done.status?.phase).toBe('Failed');
    const node = Object.values(done.status!.nodes!)[0]!;
    expect(node.message).toMatch(/^fetching the manifest: .*manifest/);
  }, 120_000);
});
