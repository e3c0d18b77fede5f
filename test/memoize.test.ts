/**
 * Step memoization against the real API server, with the local pod runner as the kubelet: a
 * memoized step runs once and its outputs are stored in a cache ConfigMap the controller creates
 * with the cache label; the same key later in the workflow, and in another workflow, is answered
 * from the cache without a pod; an entry older than maxAge runs again; a ConfigMap that is not
 * labelled as a cache is never read or written, and the step fails naming the field.
 */
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_CONFIGMAP_TYPE, LABEL_NODE_ID, LABEL_WORKFLOW, type NodeStatus, type Template, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
const { log, lines } = captureLogger();

const podsOf = async (wf: string) => (await client.list<V1Pod>(PODS, { namespace: ns, labelSelector: `${LABEL_WORKFLOW}=${wf}` })).items;
const nodeNamed = (wf: Workflow, display: string): NodeStatus => {
  const node = Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === display);
  if (!node) throw new Error(`no node ${display} in ${JSON.stringify(Object.values(wf.status?.nodes ?? {}).map((n) => n.displayName))}`);
  return node;
};

function square(cache: string, maxAge = '1h'): Template {
  return {
    name: 'square',
    inputs: { parameters: [{ name: 'n' }] },
    memoize: { key: 'square-{{inputs.parameters.n}}', maxAge, cache: { configMap: { name: cache, key: 'unused' } } },
    outputs: { parameters: [{ name: 'sq', valueFrom: { path: '/tmp/sq' } }] },
    container: { image: 'alpine:3', command: ['sh', '-c', 'echo $(({{inputs.parameters.n}} * {{inputs.parameters.n}})) > /tmp/sq'] },
  };
}

function squares(name: string, n: string, calls: number, cache: string, maxAge?: string): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: Array.from({ length: calls }, (_, i) => [
          { name: `call${i}`, template: 'square', arguments: { parameters: [{ name: 'n', value: n }] } },
        ]),
      },
      square(cache, maxAge),
    ],
  });
}

beforeAll(async () => {
  bed = await startRunnerBed('memo');
  ({ ns, client } = bed);
  controller = await startController({ kubeConfig: adminKubeConfig(), namespace: ns, metricsPort: 0, workers: 2, log });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('memoize', () => {
  it('runs a step once, stores its outputs in a labelled cache ConfigMap, and answers the same key without a pod', async () => {
    await client.create(WORKFLOWS, ns, squares('memo-first', '7', 2, 'squares'));
    const first = await waitForCompletion(client, ns, 'memo-first');
    expect(first.status?.phase).toBe('Succeeded');
    const ran = nodeNamed(first, 'call0');
    expect(ran.memoizationStatus).toEqual({ hit: false, key: 'square-7', cacheName: 'squares' });
    expect(ran.outputs?.parameters).toEqual([{ name: 'sq', value: '49' }]);
    // The second call of the same key, later in the same workflow, came from the cache.
    expect(nodeNamed(first, 'call1')).toMatchObject({
      phase: 'Succeeded',
      memoizationStatus: { hit: true, key: 'square-7', cacheName: 'squares' },
      outputs: { parameters: [{ name: 'sq', value: '49' }] },
    });
    expect((await podsOf('memo-first')).map((p) => p.metadata?.labels?.[LABEL_NODE_ID])).toEqual([ran.id]);

    const cm = await eventually(
      async () => {
        const c = await client.get<V1ConfigMap>(CONFIGMAPS, ns, 'squares').catch(() => undefined);
        return c?.data?.['square-7'] ? c : undefined;
      },
      'the cache entry',
      30_000,
    );
    expect(cm.metadata?.labels?.[LABEL_CONFIGMAP_TYPE]).toBe('Cache');
    const stored = JSON.parse(cm.data!['square-7']!) as Record<string, unknown>;
    expect(stored).toMatchObject({
      nodeID: ran.id,
      creationTimestamp: ran.finishedAt,
      outputs: { parameters: [{ name: 'sq', value: '49' }] },
    });

    await client.create(WORKFLOWS, ns, squares('memo-second', '7', 1, 'squares'));
    const second = await waitForCompletion(client, ns, 'memo-second');
    expect(second.status?.phase).toBe('Succeeded');
    expect(nodeNamed(second, 'call0')).toMatchObject({
      memoizationStatus: { hit: true },
      outputs: { parameters: [{ name: 'sq', value: '49' }] },
    });
    expect(await podsOf('memo-second')).toEqual([]);
  });

  it('runs again once the entry is older than maxAge', async () => {
    await client.create(WORKFLOWS, ns, squares('memo-fresh', '3', 1, 'short-lived', '2s'));
    expect((await waitForCompletion(client, ns, 'memo-fresh')).status?.phase).toBe('Succeeded');
    await eventually(
      async () => (await client.get<V1ConfigMap>(CONFIGMAPS, ns, 'short-lived').catch(() => undefined))?.data?.['square-3'],
      'the entry',
      30_000,
    );
    await new Promise((r) => setTimeout(r, 2_500));
    await client.create(WORKFLOWS, ns, squares('memo-stale', '3', 1, 'short-lived', '2s'));
    const stale = await waitForCompletion(client, ns, 'memo-stale');
    expect(nodeNamed(stale, 'call0')).toMatchObject({ phase: 'Succeeded', memoizationStatus: { hit: false } });
    expect(await podsOf('memo-stale')).toHaveLength(1);
  });

  it('never reads or writes a ConfigMap that is not labelled as a cache: the step fails naming the field', async () => {
    await client.create(CONFIGMAPS, ns, { metadata: { name: 'settings' }, data: { 'square-2': 'not yours' } });
    await client.create(WORKFLOWS, ns, squares('memo-foreign', '2', 1, 'settings'));
    const done = await waitForCompletion(client, ns, 'memo-foreign');
    expect(done.status?.phase).toBe('Error');
    expect(nodeNamed(done, 'call0').message).toBe(
      `spec.templates[square].memoize.cache.configMap.name: ConfigMap ${ns}/settings exists and is not a memoize cache: it lacks the label ${LABEL_CONFIGMAP_TYPE}=Cache (plugflow reads and writes no other ConfigMap as a cache); label it or name another cache`,
    );
    expect(await podsOf('memo-foreign')).toEqual([]);
    expect((await client.get<V1ConfigMap>(CONFIGMAPS, ns, 'settings')).data).toEqual({ 'square-2': 'not yours' });
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
