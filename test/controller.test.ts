/**
 * The controller end to end against the real API server, with the local pod runner playing the
 * kubelet: a 1-step workflow, a steps workflow passing outputs along, and a DAG run to
 * Succeeded; the health and metrics endpoints; a pod deleted from under a running step ends its
 * node in Error (never stuck); conflicting writers never make a node result disappear or
 * revert; and workflows the engine cannot run (recursion, a list as a parameter value, an engine
 * that throws) are decided at once with a message, never retried forever.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_NODE_PHASES, LABEL_COMPLETED, LABEL_PHASE, type NodeStatus, type Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { reconcileWorkflow } from '../src/engine/index.js';
import { KubeClient } from '../src/kube/client.js';
import { EVENTS, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { captureLogger, eventually, oneStep, waitForCompletion, workflow } from './controller-harness.js';
import { adminKubeConfig, cluster, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let runner: PodRunner;
let controller: RunningController;
const { log, lines } = captureLogger();

/** Workflows with this label make the engine throw (an engine bug, injected). */
const ENGINE_THROWS = 'test.plugflow.io/engine-throws';

/** The admin's token: /metrics asks the API server who may read it (RBAC), /healthz and /readyz do not. */
const get = (path: string) =>
  fetch(`http://127.0.0.1:${controller.metricsPort}${path}`, { headers: { authorization: `Bearer ${cluster().adminToken}` } });

function stepsWorkflow(name: string): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    arguments: { parameters: [{ name: 'greeting', value: 'hello' }] },
    templates: [
      {
        name: 'main',
        steps: [
          [
            {
              name: 'produce',
              template: 'produce',
              arguments: { parameters: [{ name: 'word', value: '{{workflow.parameters.greeting}}' }] },
            },
          ],
          [
            {
              name: 'consume',
              template: 'consume',
              arguments: { parameters: [{ name: 'text', value: '{{steps.produce.outputs.parameters.out}}' }] },
            },
            { name: 'also', template: 'consume', arguments: { parameters: [{ name: 'text', value: '{{steps.produce.outputs.result}}' }] } },
          ],
        ],
      },
      {
        name: 'produce',
        inputs: { parameters: [{ name: 'word' }] },
        outputs: { parameters: [{ name: 'out', valueFrom: { path: '/tmp/out.txt' } }] },
        script: {
          image: 'alpine:3',
          command: ['sh'],
          source: 'printf "%s world" "{{inputs.parameters.word}}" > /tmp/out.txt\necho from-stdout',
        },
      },
      {
        name: 'consume',
        inputs: { parameters: [{ name: 'text' }] },
        container: { image: 'alpine:3', command: ['echo', 'got {{inputs.parameters.text}}'] },
      },
    ],
  } as Workflow['spec']);
}

function dagWorkflow(name: string): Workflow {
  const echo = (n: string, depends?: string) => ({
    name: n,
    template: 'echo',
    ...(depends ? { depends } : {}),
    arguments: { parameters: [{ name: 'm', value: n }] },
  });
  return workflow(name, {
    entrypoint: 'diamond',
    templates: [
      { name: 'diamond', dag: { tasks: [echo('A'), echo('B', 'A'), echo('C', 'A'), echo('D', 'B && C')] } },
      {
        name: 'echo',
        inputs: { parameters: [{ name: 'm' }] },
        container: { image: 'alpine:3', command: ['echo', '{{inputs.parameters.m}}'] },
      },
    ],
  } as Workflow['spec']);
}

const byDisplayName = (wf: Workflow, name: string): NodeStatus | undefined =>
  Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === name);

beforeAll(async () => {
  ns = await createTestNamespace('ctl');
  client = await KubeClient.fromKubeConfig(adminKubeConfig());
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }), 'the default service account');
  runner = new PodRunner({
    kubeConfig: adminKubeConfig(),
    dir: mkdtempSync(join(tmpdir(), 'plugflow-ctl-runner-')),
    nodeName: `runner-${ns}`,
    namespace: ns,
    log: createLogger('runner', 'warn'),
  });
  await runner.start();
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: ns,
    metricsPort: 0,
    workers: 4,
    log,
    engine: (wf, obs) => {
      if (wf.metadata?.labels?.[ENGINE_THROWS] && !wf.status?.phase) throw new TypeError('injected engine failure');
      return reconcileWorkflow(wf, obs);
    },
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

describe('controller', () => {
  it('serves /healthz, /readyz once the caches synced, and /metrics', async () => {
    expect((await get('/healthz')).status).toBe(200);
    await eventually(async () => (await get('/readyz')).status === 200, 'readyz 200');
    const metrics = await (await get('/metrics')).text();
    for (const name of [
      'plugflow_controller_queue_depth',
      'plugflow_controller_reconcile_duration_seconds',
      'plugflow_controller_workflows',
      'plugflow_controller_api_errors_total',
      'plugflow_controller_api_writes_total',
      'plugflow_controller_informer_last_sync_age_seconds',
    ]) {
      expect(metrics).toContain(`# TYPE ${name}`);
    }
    expect((await get('/nope')).status).toBe(404);
  });

  it('runs a 1-step workflow to Succeeded with few API writes, labels and Events', async () => {
    const writesBefore = await controller.metrics.totalWrites();
    await client.create(WORKFLOWS, ns, oneStep('one', 'echo hello'));
    const done = await waitForCompletion(client, ns, 'one');
    expect(done.status?.phase).toBe('Succeeded');
    const node = Object.values(done.status!.nodes!).find((n) => n.type === 'Pod')!;
    expect(node.phase).toBe('Succeeded');
    expect(node.outputs?.exitCode).toBe('0');
    await eventually(async () => {
      const wf = await client.get<Workflow>(WORKFLOWS, ns, 'one');
      return wf.metadata.labels?.[LABEL_COMPLETED] === 'true' && wf.metadata.labels?.[LABEL_PHASE] === 'Succeeded';
    }, 'completion labels');
    const events = await eventually(async () => {
      const list = await client.list<{ reason: string; involvedObject: { name: string } }>(EVENTS, { namespace: ns });
      const mine = list.items
        .filter((e) => e.involvedObject.name === 'one')
        .map((e) => e.reason)
        .sort();
      return mine.length === 2 ? mine : undefined;
    }, 'start and finish events');
    expect(events).toEqual(['WorkflowRunning', 'WorkflowSucceeded']);
    await new Promise((r) => setTimeout(r, 500));
    const writes = (await controller.metrics.totalWrites()) - writesBefore;
    expect(writes).toBeLessThan(10);
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(/plugflow_controller_workflows\{phase="Succeeded"\} [1-9]/);
  });

  it('runs a steps workflow that passes outputs along, and a DAG, to Succeeded', async () => {
    await client.create(WORKFLOWS, ns, stepsWorkflow('steps'));
    await client.create(WORKFLOWS, ns, dagWorkflow('dag'));
    const steps = await waitForCompletion(client, ns, 'steps');
    expect(steps.status?.phase).toBe('Succeeded');
    expect(byDisplayName(steps, 'produce')?.outputs?.parameters).toEqual([{ name: 'out', value: 'hello world' }]);
    expect(byDisplayName(steps, 'consume')?.inputs?.parameters?.[0]?.value).toBe('hello world');
    expect(byDisplayName(steps, 'also')?.inputs?.parameters?.[0]?.value).toBe('from-stdout');
    const dag = await waitForCompletion(client, ns, 'dag');
    expect(dag.status?.phase).toBe('Succeeded');
    const order = ['A', 'B', 'C', 'D'].map((n) => byDisplayName(dag, n)!);
    expect(order.every((n) => n.phase === 'Succeeded')).toBe(true);
    expect(Date.parse(order[3].startedAt!)).toBeGreaterThanOrEqual(Date.parse(order[1].finishedAt!));
    expect(Date.parse(order[3].startedAt!)).toBeGreaterThanOrEqual(Date.parse(order[2].finishedAt!));
  });

  it('ends a step in Error when its pod is deleted from under it, and the workflow finishes', async () => {
    await client.create(WORKFLOWS, ns, oneStep('victim', 'sleep 60'));
    const running = await eventually(async () => {
      const wf = await client.get<Workflow>(WORKFLOWS, ns, 'victim');
      const n = Object.values(wf.status?.nodes ?? {}).find((x) => x.type === 'Pod');
      return n?.phase === 'Running' && n.observed ? n : undefined;
    }, 'the step running');
    await client.delete(PODS, ns, running.podName!);
    const done = await waitForCompletion(client, ns, 'victim');
    expect(done.status?.phase).not.toBe('Succeeded');
    const node = done.status!.nodes![running.id];
    expect(node.phase).toBe('Error');
    expect(node.message).toMatch(/deleted/);
  });

  it('decides at once on workflows the engine cannot run: recursion, a list as a parameter value, an engine that throws', async () => {
    await client.create(WORKFLOWS, ns, workflow('thrower', oneStep('x').spec, { [ENGINE_THROWS]: 'true' }));
    await client.create(
      WORKFLOWS,
      ns,
      workflow('recursive', { entrypoint: 'loop', templates: [{ name: 'loop', steps: [[{ name: 'again', template: 'loop' }]] }] }),
    );
    const listValue = workflow('list-value', {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          steps: [
            [{ name: 'a', template: 'say', arguments: { parameters: [{ name: 'm', value: 'a' }] } }],
            [{ name: 'b', template: 'say', arguments: { parameters: [{ name: 'm', value: ['x'] as never }] } }],
          ],
        },
        {
          name: 'say',
          inputs: { parameters: [{ name: 'm' }] },
          container: { image: 'alpine:3', command: ['echo', '{{inputs.parameters.m}}'] },
        },
      ],
    } as Workflow['spec']);
    await client.create(WORKFLOWS, ns, listValue);

    const thrown = await waitForCompletion(client, ns, 'thrower', 30_000);
    expect(thrown.status?.phase).toBe('Error');
    expect(thrown.status?.message).toMatch(
      /^internal error: the workflow engine failed on this workflow \(TypeError: injected engine failure\)/,
    );
    expect(
      lines.some((l) => l.message === 'the workflow engine failed on this workflow; ending it in Error' && l.workflow === `${ns}/thrower`),
    ).toBe(true);

    const recursive = await waitForCompletion(client, ns, 'recursive', 30_000);
    expect(recursive.status?.phase).toBe('Failed');
    expect(recursive.status?.message).toMatch(/^maximum recursion depth exceeded: template "loop" nested 101 deep/);

    const list = await waitForCompletion(client, ns, 'list-value', 30_000);
    expect(list.status?.phase).toBe('Failed');
    expect(list.status?.message).toBe(
      'invalid spec: spec.templates[main].steps[1][b].arguments.parameters[m].value must be a string, number or boolean, got a list',
    );
  });

  it('never loses or reverts a node result while another writer keeps bumping the resourceVersion', async () => {
    const name = 'contested';
    const conflictsBefore = (await controller.metrics.statusConflicts.get()).values[0]?.value ?? 0;
    const versions: Workflow[] = [];
    // Record every version of the workflow from the first.
    const stopWatch = new AbortController();
    const watching = client.watch(
      WORKFLOWS,
      { namespace: ns, fieldSelector: `metadata.name=${name}` },
      (e) => {
        if (e.type === 'ADDED' || e.type === 'MODIFIED') versions.push(e.object as unknown as Workflow);
      },
      stopWatch.signal,
    );
    await client.create(WORKFLOWS, ns, stepsWorkflow(name));
    // The other writer: annotation patches as fast as the API server takes them.
    let bumps = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        await client.mergePatch(WORKFLOWS, ns, name, { metadata: { annotations: { bump: String(bumps++) } } }).catch(() => {});
      }
    })();
    const done = await waitForCompletion(client, ns, name);
    stop = true;
    await writer;
    await new Promise((r) => setTimeout(r, 500));
    stopWatch.abort();
    await watching;

    expect(done.status?.phase).toBe('Succeeded');
    expect(Object.values(done.status!.nodes!).every((n) => n.phase === 'Succeeded')).toBe(true);
    expect(byDisplayName(done, 'produce')?.outputs?.parameters).toEqual([{ name: 'out', value: 'hello world' }]);
    const conflicts = ((await controller.metrics.statusConflicts.get()).values[0]?.value ?? 0) - conflictsBefore;
    expect(bumps).toBeGreaterThan(10);
    expect(conflicts).toBeGreaterThan(0);
    // Once a node is final in some version, every later version shows it identical.
    const finalSeen = new Map<string, NodeStatus>();
    for (const v of versions) {
      for (const [id, seen] of finalSeen)
        expect(v.status?.nodes?.[id], `node ${id} in version ${v.metadata.resourceVersion}`).toEqual(seen);
      for (const [id, n] of Object.entries(v.status?.nodes ?? {}))
        if (FINAL_NODE_PHASES.includes(n.phase) && !finalSeen.has(id)) finalSeen.set(id, n);
    }
    expect(finalSeen.size).toBe(Object.keys(done.status!.nodes!).length);
  });
});
