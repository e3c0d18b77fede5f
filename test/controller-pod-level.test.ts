/**
 * The peer's newest workflow fields against the real API server (v1.35), with the local pod
 * runner as the kubelet — it ignores resources and claims, so the assertions are on the Pod
 * objects the controller created, as the API server stored them:
 *   - spec.podResources and a template's own podResources: the pod's spec.resources (pod-level
 *     resources, GA in 1.35), the template's replacing the workflow's;
 *   - spec.resourceClaims and a template's own: the pod's spec.resourceClaims (DRA), containers
 *     naming them in resources.claims;
 *   - a template's workflows.plugflow.io/display-name annotation, rendered with the inputs, names
 *     its nodes in the status (and reaches no pod);
 *   - the peer's database-backed locks fail the workflow at once, naming the field and the way out.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_NODE_ID, LABEL_WORKFLOW, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { PODS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
const { log } = captureLogger();

/** The workflow's pods by the display name of their node. */
async function podsByNode(done: Workflow): Promise<Record<string, V1Pod>> {
  const pods = (await client.list<V1Pod>(PODS, { namespace: ns, labelSelector: `${LABEL_WORKFLOW}=${done.metadata.name}` })).items;
  const nodes = done.status?.nodes ?? {};
  return Object.fromEntries(pods.map((p) => [nodes[p.metadata!.labels![LABEL_NODE_ID]!]?.displayName ?? p.metadata!.name!, p]));
}

const echo = (text: string) => ({ image: 'alpine:3', command: ['echo', text] });

beforeAll(async () => {
  bed = await startRunnerBed('podlevel');
  ({ ns, client } = bed);
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('pod-level fields of the peer', () => {
  it("podResources: the workflow's on every pod, a template's own replacing it (its sidecar inside the budget)", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('budget', {
        entrypoint: 'main',
        podResources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '512Mi' } },
        templates: [
          { name: 'main', steps: [[{ name: 'small', template: 'small' }], [{ name: 'large', template: 'large' }]] },
          { name: 'small', container: echo('small step') },
          {
            name: 'large',
            podResources: { limits: { cpu: '2', memory: '1Gi' } },
            container: { ...echo('large step'), resources: { limits: { cpu: '500m', memory: '128Mi' } } },
            sidecars: [{ name: 'helper', image: 'alpine:3', command: ['sleep', '1'] }],
          },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'budget');
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const pods = await podsByNode(done);
    expect(pods.small!.spec!.resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
    // Only limits given: the API server defaults the pod's requests to its containers' (the main
    // container's, defaulted from its limits; plugflow's init and wait containers ask for none).
    expect(pods.large!.spec!.resources).toEqual({ limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '500m', memory: '128Mi' } });
    expect(pods.large!.spec!.containers.find((c) => c.name === 'main')!.resources!.limits).toEqual({ cpu: '500m', memory: '128Mi' });
  });

  it("resourceClaims: the workflow's on every pod, a template's own list replacing it whole; containers name them", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('devices', {
        entrypoint: 'main',
        resourceClaims: [{ name: 'accelerator', resourceClaimTemplateName: 'example-device-claim-template' }],
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'default-device', template: 'default-device' }], [{ name: 'other-device', template: 'other' }]],
          },
          { name: 'default-device', container: { ...echo('default'), resources: { claims: [{ name: 'accelerator' }] } } },
          {
            name: 'other',
            inputs: { parameters: [{ name: 'size', value: 'large' }] },
            resourceClaims: [
              { name: 'accelerator', resourceClaimTemplateName: 'example-{{inputs.parameters.size}}-device-claim-template' },
              { name: 'shared', resourceClaimName: 'pool' },
            ],
            container: { ...echo('other'), resources: { claims: [{ name: 'accelerator' }, { name: 'shared' }] } },
          },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'devices');
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const pods = await podsByNode(done);
    const main = (p: V1Pod) => p.spec!.containers.find((c) => c.name === 'main')!;
    expect(pods['default-device']!.spec!.resourceClaims).toEqual([
      { name: 'accelerator', resourceClaimTemplateName: 'example-device-claim-template' },
    ]);
    expect(main(pods['default-device']!).resources!.claims).toEqual([{ name: 'accelerator' }]);
    expect(pods['other-device']!.spec!.resourceClaims).toEqual([
      { name: 'accelerator', resourceClaimTemplateName: 'example-large-device-claim-template' },
      { name: 'shared', resourceClaimName: 'pool' },
    ]);
    expect(main(pods['other-device']!).resources!.claims).toEqual([{ name: 'accelerator' }, { name: 'shared' }]);
  });

  it('the display-name annotation names each node with its inputs; it reaches no pod', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('named', {
        entrypoint: 'loop',
        arguments: { parameters: [{ name: 'os-list', value: '[{"image":"alpine","tag":"3"},{"image":"alpine","tag":"3.20"}]' }] },
        templates: [
          {
            name: 'loop',
            inputs: { parameters: [{ name: 'os-list' }] },
            steps: [
              [
                {
                  name: 'test-linux',
                  template: 'cat-os-release',
                  arguments: {
                    parameters: [
                      { name: 'image', value: '{{item.image}}' },
                      { name: 'tag', value: '{{item.tag}}' },
                    ],
                  },
                  withParam: '{{inputs.parameters.os-list}}',
                },
              ],
            ],
          },
          {
            name: 'cat-os-release',
            annotations: { 'workflows.plugflow.io/display-name': 'os-{{inputs.parameters.image}}-{{inputs.parameters.tag}}', note: 'kept' },
            inputs: { parameters: [{ name: 'image' }, { name: 'tag' }] },
            container: { image: '{{inputs.parameters.image}}:{{inputs.parameters.tag}}', command: ['echo', 'release'] },
          },
        ],
      }),
    );
    const done = await waitForCompletion(client, ns, 'named');
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const pods = await podsByNode(done);
    expect(Object.keys(pods).sort()).toEqual(['os-alpine-3', 'os-alpine-3.20']);
    expect(pods['os-alpine-3']!.spec!.containers.find((c) => c.name === 'main')!.image).toBe('alpine:3');
    for (const p of Object.values(pods)) {
      expect(Object.keys(p.metadata!.annotations ?? {})).not.toContain('workflows.plugflow.io/display-name');
      expect(Object.keys(p.metadata!.annotations ?? {})).not.toContain('note');
    }
  });

  it("the peer's database-backed locks fail the workflow at once, saying what to use instead, and start no pod", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('db-lock', {
        entrypoint: 'main',
        synchronization: { semaphores: [{ database: { key: 'workflow' } }] } as never,
        templates: [{ name: 'main', synchronization: { mutexes: [{ name: 'welcome', database: true }] } as never, container: echo('x') }],
      }),
    );
    const done = await waitForCompletion(client, ns, 'db-lock', 30_000);
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.message).toContain("spec.synchronization.semaphores[0].database is not supported yet: the peer's");
    expect(done.status?.message).toContain('give the limit in a ConfigMap key (configMapKeyRef) instead');
    expect(done.status?.message).toContain('spec.templates[main].synchronization.mutexes[welcome].database is not supported yet');
    expect(done.status?.message).toContain('a plain mutex (name) already holds across the cluster');
    expect(done.status?.message).not.toContain('is not a field plugflow knows');
    expect((await client.list<V1Pod>(PODS, { namespace: ns, labelSelector: `${LABEL_WORKFLOW}=db-lock` })).items).toEqual([]);
  });
});
