/**
 * The controller's executor-plugin side against the real API server: discovery of labelled
 * ConfigMaps with its log lines, the TaskSet and agent pod of a workflow with a plugin step (the
 * workflow namespace's plugin winning over the installation namespace's), results copied back,
 * the agent deleted on completion, a failed agent pod replaced (the task it had taken ending in
 * Error, the others waiting for the new pod; bounded, also across a restart), one that cannot be created ending its
 * nodes in Error, and the feature gate off.
 *
 * The agent itself is not run here (src/agent has its own suites): this test writes the
 * TaskSet's status and the agent pod's status where the agent and the kubelet would.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_COMPLETED, type Workflow, type WorkflowTaskSet } from '../src/api/index.js';
import { AGENT_DELETE_GRACE_SECONDS, MAX_AGENT_REPLACEMENTS } from '../src/controller/action-applier.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { PLUGINS_DISABLED_MESSAGE } from '../src/engine/index.js';
import { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, PODS, WORKFLOWS, WORKFLOW_TASK_SETS } from '../src/kube/resource.js';
import { AGENT_SERVICE_ACCOUNT, buildPlugin } from '../src/plugins/index.js';
import { captureLogger, eventually, waitForCompletion, workflow, type LogLine } from './controller-harness.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

function pluginConfigMap(name: string, port: number, extra: { env?: string; automount?: boolean } = {}) {
  return buildPlugin({
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'ExecutorPlugin',
    metadata: { name },
    spec: {
      sidecar: {
        automountServiceAccountToken: extra.automount ?? false,
        container: {
          name,
          image: 'python:3.11-alpine',
          command: ['python3', '-c', 'print(1)'],
          ports: [{ containerPort: port }],
          env: extra.env ? [{ name: 'EXTRA', value: extra.env }] : [],
          resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          securityContext: { runAsNonRoot: true, runAsUser: 65534 },
        },
      },
    },
  } as Parameters<typeof buildPlugin>[0]).configMap;
}

function pluginWorkflow(name: string): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'greet', template: 'greet' }]] },
      { name: 'greet', plugin: { hello: { name: 'Ada' } }, outputs: { parameters: [{ name: 'greeting' }] } },
    ],
  } as Workflow['spec']);
}

const pluginLines = (lines: LogLine[], namespace: string) =>
  lines
    .filter((l) => /^Executor plugin (added|updated|removed)$/.test(String(l.message)) && l.namespace === namespace)
    .map((l) => `${l.message} ${l.namespace}/${l.name}`);

describe('controller: executor plugins', () => {
  let client: KubeClient;
  let install: string;
  let work: string;
  let controller: RunningController;
  const { log, lines } = captureLogger();
  const start = () =>
    startController({
      kubeConfig: adminKubeConfig(),
      namespace: work,
      installNamespace: install,
      pluginsEnabled: true,
      recordEvents: false,
      processMetrics: false,
      log,
    });

  beforeAll(async () => {
    client = await KubeClient.fromKubeConfig(adminKubeConfig());
    install = await createTestNamespace('ctl-plugins-install');
    work = await createTestNamespace('ctl-plugins-work');
    // The agent runs under its own account, which the namespace's admin creates (README "Pod security").
    await adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedServiceAccount({ namespace: work, body: { metadata: { name: AGENT_SERVICE_ACCOUNT } } });
    controller = await start();
  });

  afterAll(async () => {
    await controller?.stop();
    await client?.close();
    await deleteTestNamespace(install);
    await deleteTestNamespace(work);
  });

  it('logs plugins added, updated and removed, and malformed ConfigMaps with the reason', async () => {
    await client.create(CONFIGMAPS, install, pluginConfigMap('hello', 4355));
    await eventually(() => pluginLines(lines, install).includes(`Executor plugin added ${install}/hello`), 'added line');
    await client.mergePatch(CONFIGMAPS, install, 'hello-executor-plugin', { data: pluginConfigMap('hello', 4355, { env: 'x' }).data });
    await eventually(() => pluginLines(lines, install).includes(`Executor plugin updated ${install}/hello`), 'updated line');
    // A change that is not a change of the plugin (an annotation) is not an update.
    await client.mergePatch(CONFIGMAPS, install, 'hello-executor-plugin', { metadata: { annotations: { note: 'n' } } });

    const broken = pluginConfigMap('broken', 4356);
    broken.data['sidecar.container'] = 'name: [unclosed';
    await client.create(CONFIGMAPS, install, broken);
    const malformed = await eventually(
      () => lines.find((l) => l.namespace === install && l.name === 'broken-executor-plugin' && String(l.message).includes('malformed')),
      'malformed line',
    );
    expect(malformed.level).toBe('warn');
    expect(String(malformed.reason)).toContain('sidecar.container');

    await client.delete(CONFIGMAPS, install, 'hello-executor-plugin');
    await eventually(() => pluginLines(lines, install).includes(`Executor plugin removed ${install}/hello`), 'removed line');
    expect(pluginLines(lines, install)).toEqual([
      `Executor plugin added ${install}/hello`,
      `Executor plugin updated ${install}/hello`,
      `Executor plugin removed ${install}/hello`,
    ]);
  });

  it('writes the task, starts the agent with the workflow namespace plugin, copies the result back and cleans up', async () => {
    await client.create(CONFIGMAPS, install, pluginConfigMap('hello', 4355));
    await client.create(CONFIGMAPS, work, pluginConfigMap('hello', 4455));
    await eventually(() => pluginLines(lines, work).includes(`Executor plugin added ${work}/hello`), 'work-namespace plugin seen');
    await client.create(WORKFLOWS, work, pluginWorkflow('greeter'));

    const ts = await eventually(async () => {
      const t = await client.get<WorkflowTaskSet>(WORKFLOW_TASK_SETS, work, 'greeter').catch(() => undefined);
      return t && Object.keys(t.spec.tasks ?? {}).length > 0 ? t : undefined;
    }, 'the TaskSet with the task');
    const [nodeId, task] = Object.entries(ts.spec.tasks!)[0];
    expect(task.plugin).toEqual({ hello: { name: 'Ada' } });
    expect(ts.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Workflow', name: 'greeter', controller: true });

    const agent = await eventually(
      () => client.get<{ spec: { containers: { name: string; ports?: { containerPort: number }[] }[] } }>(PODS, work, 'greeter-agent'),
      'agent pod',
    );
    const sidecar = agent.spec.containers.find((c) => c.name === 'hello');
    expect(sidecar?.ports?.[0]?.containerPort).toBe(4455); // the workflow namespace's plugin won
    // Bind it to a node without a kubelet: a bound pod's deletion is graceful and stays visible.
    await adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedPodBinding({
        name: 'greeter-agent',
        namespace: work,
        body: { metadata: { name: 'greeter-agent' }, target: { apiVersion: 'v1', kind: 'Node', name: 'no-kubelet' } },
      });

    // The agent reports the result.
    await client.mergePatch(
      WORKFLOW_TASK_SETS,
      work,
      'greeter',
      {
        status: {
          nodes: {
            [nodeId]: { phase: 'Succeeded', message: 'Hello, Ada!', outputs: { parameters: [{ name: 'greeting', value: 'Hello, Ada!' }] } },
          },
        },
      },
      'status',
    );
    const done = await waitForCompletion(client, work, 'greeter');
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.nodes?.[nodeId]?.outputs?.parameters).toEqual([{ name: 'greeting', value: 'Hello, Ada!' }]);
    await eventually(async () => {
      const t = await client.get<WorkflowTaskSet>(WORKFLOW_TASK_SETS, work, 'greeter');
      return t.metadata.labels?.[LABEL_COMPLETED] === 'true' && !(nodeId in (t.spec.tasks ?? {})) && !(nodeId in (t.status?.nodes ?? {}));
    }, 'the TaskSet marked completed, the finished task and its copied result removed');
    // No kubelet finalizes the deletion, so the pod stays visible, marked for deletion with the
    // short grace period (plugin servers must not hold it for 30 s).
    const deleting = await eventually(async () => {
      const p = await client.get<{ metadata: { deletionTimestamp?: string; deletionGracePeriodSeconds?: number } }>(
        PODS,
        work,
        'greeter-agent',
      );
      return p.metadata.deletionTimestamp ? p : undefined;
    }, 'the agent pod deleted');
    expect(deleting.metadata.deletionGracePeriodSeconds).toBe(AGENT_DELETE_GRACE_SECONDS);
  });

  /** Marks the agent pod Failed the way the kubelet would: its main container exited `exitCode`. */
  async function failAgentPod(name: string, message: string, exitCode = 3): Promise<string> {
    const pod = await eventually(() => client.get<{ metadata: { uid: string } }>(PODS, work, name), `agent pod ${name}`);
    const now = new Date().toISOString();
    await client.mergePatch(
      PODS,
      work,
      name,
      {
        status: {
          phase: 'Failed',
          containerStatuses: [
            {
              name: 'main',
              image: 'x',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode, reason: 'Error', message, startedAt: now, finishedAt: now } },
            },
          ],
        },
      },
      'status',
    );
    return pod.metadata.uid;
  }

  /** The agent pod `name` once it is a different pod than `uid` (the controller replaced it). */
  const replacement = (name: string, uid: string) =>
    eventually(async () => {
      const p = await client.get<{ metadata: { uid: string } }>(PODS, work, name).catch(() => undefined);
      return p && p.metadata.uid !== uid ? p : undefined;
    }, `a new ${name} pod`);

  async function taskOf(workflowName: string): Promise<string> {
    const ts = await eventually(async () => {
      const t = await client.get<WorkflowTaskSet>(WORKFLOW_TASK_SETS, work, workflowName).catch(() => undefined);
      return t && Object.keys(t.spec.tasks ?? {}).length > 0 ? t : undefined;
    }, `the TaskSet of ${workflowName} with its task`);
    return Object.keys(ts.spec.tasks!)[0]!;
  }

  it('ends the task a failed agent pod had taken in Error with the reason', async () => {
    await client.create(WORKFLOWS, work, pluginWorkflow('agent-dies'));
    const nodeId = await taskOf('agent-dies');
    await client.mergePatch(WORKFLOW_TASK_SETS, work, 'agent-dies', { status: { nodes: { [nodeId]: { phase: 'Running' } } } }, 'status');
    await eventually(
      async () => (await client.get<Workflow>(WORKFLOWS, work, 'agent-dies')).status?.nodes?.[nodeId]?.phase === 'Running',
      'node Running',
    );
    await failAgentPod('agent-dies-agent', 'cannot reach the API server');
    const done = await waitForCompletion(client, work, 'agent-dies');
    expect(done.status?.phase).toBe('Error');
    const node = done.status!.nodes![nodeId]!;
    expect(node.phase).toBe('Error');
    expect(node.message).toMatch(/agent pod agent-dies-agent failed/);
    expect(node.message).toContain('cannot reach the API server');
  });

  it('replaces a failed agent pod: a task it never took runs on the new pod', async () => {
    await client.create(WORKFLOWS, work, pluginWorkflow('agent-replaced'));
    const nodeId = await taskOf('agent-replaced');
    const first = await failAgentPod('agent-replaced-agent', 'listen EADDRINUSE 0.0.0.0:9766', 1);
    await replacement('agent-replaced-agent', first);
    expect(
      lines.some((l) => String(l.message).startsWith('agent pod failed; replacing it') && String(l.reason).includes('EADDRINUSE')),
    ).toBe(true);
    expect((await client.get<Workflow>(WORKFLOWS, work, 'agent-replaced')).status?.nodes?.[nodeId]?.phase).toBe('Pending');
    // The new agent reports the result.
    await client.mergePatch(
      WORKFLOW_TASK_SETS,
      work,
      'agent-replaced',
      { status: { nodes: { [nodeId]: { phase: 'Succeeded', outputs: { parameters: [{ name: 'greeting', value: 'hi' }] } } } } },
      'status',
    );
    const done = await waitForCompletion(client, work, 'agent-replaced');
    expect(done.status?.phase).toBe('Succeeded');
  });

  it(`gives up on an agent pod that keeps failing after ${MAX_AGENT_REPLACEMENTS} replacements, ending its tasks in Error`, async () => {
    await client.create(WORKFLOWS, work, pluginWorkflow('agent-crashloop'));
    const nodeId = await taskOf('agent-crashloop');
    let uid = await failAgentPod('agent-crashloop-agent', 'plugin config broken', 2);
    for (let i = 0; i < MAX_AGENT_REPLACEMENTS; i++) {
      await replacement('agent-crashloop-agent', uid);
      uid = await failAgentPod('agent-crashloop-agent', 'plugin config broken', 2);
    }
    const done = await waitForCompletion(client, work, 'agent-crashloop');
    const node = done.status!.nodes![nodeId]!;
    expect(node.phase).toBe('Error');
    expect(node.message).toContain('plugin config broken');
    expect(node.message).toContain(`failed ${MAX_AGENT_REPLACEMENTS + 1} times`);
  });

  it('keeps counting agent pod replacements across a controller restart (the count is in the status)', async () => {
    const name = 'agent-restart-agent';
    await client.create(WORKFLOWS, work, pluginWorkflow('agent-restart'));
    const nodeId = await taskOf('agent-restart');
    const before = 3;
    let uid = await failAgentPod(name, 'plugin config broken', 2);
    for (let i = 0; i < before; i++) {
      await replacement(name, uid);
      uid = await failAgentPod(name, 'plugin config broken', 2);
    }
    await eventually(
      async () => (await client.get<Workflow>(WORKFLOWS, work, 'agent-restart')).status?.agent?.replacements === before + 1,
      'the count in the status',
    );
    await controller.stop();
    controller = await start();
    for (let failedPods = before + 1; failedPods <= MAX_AGENT_REPLACEMENTS; failedPods++) {
      await replacement(name, uid);
      uid = await failAgentPod(name, 'plugin config broken', 2);
    }
    const done = await waitForCompletion(client, work, 'agent-restart');
    const node = done.status!.nodes![nodeId]!;
    expect(node.phase).toBe('Error');
    expect(node.message).toContain(`failed ${MAX_AGENT_REPLACEMENTS + 1} times`);
    expect(done.status?.agent?.replacements).toBe(MAX_AGENT_REPLACEMENTS);
  });

  it('ends plugin nodes in Error when the agent pod cannot be created', async () => {
    // A plugin that asks for a service account token whose service account does not exist.
    await client.mergePatch(CONFIGMAPS, work, 'hello-executor-plugin', { data: pluginConfigMap('hello', 4455, { automount: true }).data });
    await eventually(() => pluginLines(lines, work).includes(`Executor plugin updated ${work}/hello`), 'plugin updated');
    await client.create(WORKFLOWS, work, pluginWorkflow('no-agent'));
    const done = await waitForCompletion(client, work, 'no-agent');
    const node = Object.values(done.status!.nodes!).find((n) => n.type === 'Plugin')!;
    expect(node.phase).toBe('Error');
    expect(node.message).toContain(`service account ${work}/hello-executor-plugin does not exist`);
    await expect(client.get(PODS, work, 'no-agent-agent')).rejects.toMatchObject({ code: 404 });
  });

  it('discovers a labelled ConfigMap whose name lacks -executor-plugin, and prefers <name>-executor-plugin over it', async () => {
    const other = await createTestNamespace('ctl-plugins-bare');
    try {
      // Published plugins exist under both names; the label is what makes a ConfigMap a plugin.
      const bare = pluginConfigMap('bare', 4501);
      bare.metadata.name = 'bare';
      await client.create(CONFIGMAPS, other, bare);
      await eventually(() => pluginLines(lines, other).includes(`Executor plugin added ${other}/bare`), 'bare plugin added');
      expect(lines.some((l) => l.namespace === other && String(l.message).includes('malformed'))).toBe(false);

      await client.create(CONFIGMAPS, other, pluginConfigMap('bare', 4502));
      const leftOut = await eventually(
        () => lines.find((l) => l.message === 'Executor plugin left out of agent pods' && l.namespace === other),
        'left-out line',
      );
      expect(leftOut).toMatchObject({
        level: 'warn',
        name: 'bare',
        configMap: `${other}/bare`,
        keptInstead: `${other}/bare-executor-plugin`,
      });
      expect(String(leftOut.reason)).toContain(`it defines plugin bare, as ConfigMap ${other}/bare-executor-plugin does`);
      const own = controller.caches.plugins!.pluginsFor(other).filter((p) => p.namespace === other);
      expect(own.map((p) => `${p.configMapName}:${p.container.ports![0]!.containerPort}`)).toEqual(['bare-executor-plugin:4502']);
    } finally {
      await deleteTestNamespace(other);
    }
  });
});

describe('controller: executor plugins gate off', () => {
  it('watches no plugin ConfigMaps and fails plugin steps saying how to enable them', async () => {
    const client = await KubeClient.fromKubeConfig(adminKubeConfig());
    const ns = await createTestNamespace('ctl-plugins-off');
    const { log } = captureLogger();
    const controller = await startController({
      kubeConfig: adminKubeConfig(),
      namespace: ns,
      pluginsEnabled: false,
      recordEvents: false,
      processMetrics: false,
      log,
    });
    try {
      expect(controller.caches.informers().map((i) => i.name)).not.toContain('plugin-configmaps');
      await client.create(WORKFLOWS, ns, pluginWorkflow('gated'));
      const done = await waitForCompletion(client, ns, 'gated');
      expect(done.status?.phase).toBe('Failed');
      const node = Object.values(done.status!.nodes!).find((n) => n.type === 'Plugin')!;
      expect(node.message).toBe(PLUGINS_DISABLED_MESSAGE);
      await expect(client.get(WORKFLOW_TASK_SETS, ns, 'gated')).rejects.toMatchObject({ code: 404 });
    } finally {
      await controller.stop();
      await client.close();
      await deleteTestNamespace(ns);
    }
  });
});
