/**
 * `--node-events`: the peer's node Events on the workflow, annotated with the node's name and
 * type, next to the workflow's own; off, only the workflow's own (the other controller suites).
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController, type RunningController } from '../src/controller/controller.js';
import { ANNOTATION_NODE_NAME, ANNOTATION_NODE_TYPE } from '../src/controller/features/node-events.js';
import { KubeClient } from '../src/kube/client.js';
import { EVENTS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { eventually, waitForCompletion, workflow } from './controller-harness.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

interface Event {
  reason: string;
  type: string;
  message: string;
  metadata: { annotations?: Record<string, string> };
  involvedObject: { name: string; kind: string };
}

let ns: string;
let client: KubeClient;
let runner: PodRunner;
let controller: RunningController;

beforeAll(async () => {
  ns = await createTestNamespace('node-events');
  client = await KubeClient.fromKubeConfig(adminKubeConfig());
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }), 'the default service account');
  runner = new PodRunner({
    kubeConfig: adminKubeConfig(),
    dir: mkdtempSync(join(tmpdir(), 'plugflow-node-events-runner-')),
    nodeName: `runner-${ns}`,
    namespace: ns,
    log: createLogger('runner', 'warn'),
  });
  await runner.start();
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: ns,
    metricsPort: 0,
    nodeEvents: true,
    log: createLogger('controller', 'warn'),
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

describe('node events', () => {
  it("records the peer's node Events: a step that succeeds and one that fails, with the node's name and type", async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('nodes', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [[{ name: 'good', template: 'ok' }], [{ name: 'bad', template: 'fail' }]],
          },
          { name: 'ok', container: { image: 'alpine:3', command: ['sh', '-c', 'true'] } },
          { name: 'fail', container: { image: 'alpine:3', command: ['sh', '-c', 'exit 3'] } },
        ],
      }),
    );
    expect((await waitForCompletion(client, ns, 'nodes')).status?.phase).toBe('Failed');
    const events = await eventually(async () => {
      const list = await client.list<Event>(EVENTS, { namespace: ns });
      const mine = list.items.filter((e) => e.involvedObject.name === 'nodes');
      return mine.some((e) => e.reason === 'WorkflowFailed') && mine.some((e) => e.reason === 'WorkflowNodeFailed') ? mine : undefined;
    }, 'the workflow and node events');
    const about = (reason: string, nodeName: string) =>
      events.find((e) => e.reason === reason && e.metadata.annotations?.[ANNOTATION_NODE_NAME] === nodeName);
    const good = about('WorkflowNodeSucceeded', 'nodes[0].good');
    expect(good).toMatchObject({ type: 'Normal', message: 'Succeeded node nodes[0].good', involvedObject: { kind: 'Workflow' } });
    expect(good?.metadata.annotations?.[ANNOTATION_NODE_TYPE]).toBe('Pod');
    const bad = about('WorkflowNodeFailed', 'nodes[1].bad');
    expect(bad?.type).toBe('Warning');
    expect(bad?.message).toMatch(/^Failed node nodes\[1\]\.bad: /);
    expect(about('WorkflowNodeFailed', 'nodes')?.metadata.annotations?.[ANNOTATION_NODE_TYPE]).toBe('Steps');
    expect(events.map((e) => e.reason)).toContain('WorkflowRunning');
  });
});
