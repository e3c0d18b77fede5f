/**
 * `--node-events`: the peer's node Events on the workflow, annotated with the node's name and
 * type, next to the workflow's own; off, only the workflow's own (the other controller suites).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController, type RunningController } from '../src/controller/controller.js';
import { ANNOTATION_NODE_NAME, ANNOTATION_NODE_TYPE } from '../src/controller/features/node-events.js';
import { EVENTS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

interface Event {
  reason: string;
  type: string;
  message: string;
  metadata: { annotations?: Record<string, string> };
  involvedObject: { name: string; kind: string };
}

let bed: RunnerBed;
let controller: RunningController;

beforeAll(async () => {
  bed = await startRunnerBed('node-events');
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: bed.ns,
    metricsPort: 0,
    nodeEvents: true,
    log: createLogger('controller', 'warn'),
  });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('node events', () => {
  it("records the peer's node Events: a step that succeeds and one that fails, with the node's name and type", async () => {
    await bed.client.create(
      WORKFLOWS,
      bed.ns,
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
    expect((await waitForCompletion(bed.client, bed.ns, 'nodes')).status?.phase).toBe('Failed');
    const events = await eventually(async () => {
      const list = await bed.client.list<Event>(EVENTS, { namespace: bed.ns });
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
