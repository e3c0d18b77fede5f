/**
 * Workflow-level executor plugins (`spec.executorPlugins`) end to end, through the real API
 * server with the local pod runner playing the kubelet of the agent pod:
 *
 * - with WORKFLOW_LEVEL_EXECUTOR_PLUGINS on, a workflow declaring the repository's Python `hello`
 *   plugin (examples/plugins/hello: plugin.yaml's container with server.py as its args, as
 *   `plugflow plugin build` makes it) runs its plugin step to Succeeded; its plugin replaces the
 *   installation namespace's ConfigMap plugin of the same name (the peer's rule), which answers
 *   differently and is not in the agent pod;
 * - a hostile workflow whose plugin asks for root is refused naming the field: by the REST
 *   server at submission, and by the controller when created behind the server's back;
 * - with the gate off, the same workflow is refused when it starts, naming the field and the gate,
 *   and nothing runs.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_WORKFLOW, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { WORKFLOW_PLUGINS_DISABLED_DETAIL } from '../src/engine/workflow-plugins.js';
import { buildPlugin, readPluginYaml, sidecarContainer } from '../src/plugins/index.js';
import { agentPodName } from '../src/pods/agent-pod.js';
import { findServerFile } from '../src/plugins/plugin-dir.js';
import {
  agentSlot,
  applyInto,
  expectPhase,
  nodeNamed,
  outputParameter,
  pythonPlugin,
  startE2eStack,
  waitFor,
  waitForPluginLog,
  type E2eStack,
} from './support/e2e.js';

const HELLO = join(REPO_ROOT, 'examples', 'plugins', 'hello');
const HELLO_PORT = 4355;

let stack: E2eStack;

/** The hello example's workflow, declaring the hello plugin itself (container edited by `edit`). */
function helloWorkflow(edit: (container: Record<string, any>) => void = () => {}): Workflow {
  const wf = parse(readFileSync(join(HELLO, 'workflow.yaml'), 'utf8')) as Workflow;
  const { plugin } = readPluginYaml(readFileSync(join(HELLO, 'plugin.yaml'), 'utf8'));
  const container = sidecarContainer(plugin, findServerFile(HELLO)) as Record<string, any>;
  edit(container);
  wf.metadata = { generateName: 'wf-level-hello-' };
  wf.spec.executorPlugins = [{ metadata: { name: 'hello' }, spec: { sidecar: { container } } }] as Workflow['spec']['executorPlugins'];
  return wf;
}

const asRoot = (c: Record<string, any>) => {
  c.securityContext = { runAsNonRoot: false, runAsUser: 0 };
};
const ROOT_FIELD = 'spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsUser';

async function create(s: E2eStack, wf: Workflow): Promise<string> {
  const created = (await s.objects.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: s.namespace,
    plural: PLURAL.workflow,
    body: { ...wf, metadata: { ...wf.metadata, namespace: s.namespace } },
  })) as Workflow;
  return created.metadata.name!;
}

beforeAll(async () => {
  stack = await startE2eStack({ prefix: 'e2e-wfplug', plugins: true, workflowLevelPlugins: true });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

describe('workflow-level executor plugins end to end', () => {
  it("runs the workflow's own hello plugin to Succeeded, in place of the ConfigMap plugin of the same name", async () => {
    // A ConfigMap plugin named hello in the installation namespace, answering otherwise.
    const shadowed = buildPlugin(
      pythonPlugin({
        name: 'hello',
        port: HELLO_PORT,
        execute: 'def execute(config, args):\n    return {"node": {"phase": "Failed", "message": "answered by the ConfigMap plugin"}}',
      }),
    ).configMap;
    await applyInto(stack.admin, stack.installNamespace, [shadowed]);
    await waitForPluginLog(stack, 'added', stack.installNamespace, 'hello');

    const release = await agentSlot([HELLO_PORT]);
    let agentPod: V1Pod | undefined;
    let wf: Workflow;
    try {
      const name = await stack.submit(helloWorkflow());
      agentPod = await waitFor(
        `the agent pod of ${name}`,
        () => stack.core.readNamespacedPod({ name: agentPodName(name), namespace: stack.namespace }),
        { everyMs: 100, timeoutMs: 90_000, describe: () => stack.describe(name) },
      );
      wf = await stack.waitForCompletion(name, 150_000);
      await waitFor(
        `the agent pod of ${name} to be deleted`,
        async () =>
          (
            await stack.core.listNamespacedPod({
              namespace: stack.namespace,
              labelSelector: `${LABEL_WORKFLOW}=${name},workflows.plugflow.io/component=agent`,
            })
          ).items.length === 0,
        { timeoutMs: 60_000 },
      );
    } finally {
      release();
      await stack.core.deleteNamespacedConfigMap({ name: 'hello-executor-plugin', namespace: stack.installNamespace }).catch(() => {});
    }
    expectPhase(wf, 'Succeeded');
    const greet = nodeNamed(wf, 'greet');
    expect(greet).toMatchObject({ type: 'Plugin', phase: 'Succeeded', message: 'Hello, Ada!' });
    expect(outputParameter(greet, 'greeting')).toBe('Hello, Ada!');
    expect(nodeNamed(wf, 'show').outputs?.result).toBe('Hello, Ada!');

    // One plugin sidecar: the workflow's (server.py as its args), with its own token only,
    // non-root and hardened as every plugin sidecar.
    const sidecars = agentPod!.spec!.containers.filter((c) => c.name !== 'main');
    expect(sidecars.map((c) => c.name)).toEqual(['hello']);
    expect(sidecars[0]!.args?.[0]).toBe(findServerFile(HELLO)!.text);
    expect(sidecars[0]!.volumeMounts).toEqual([{ name: 'token-hello', mountPath: '/var/run/workflow', readOnly: true }]);
    expect(sidecars[0]!.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65534,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(stack.runner!.readLog(stack.namespace, agentPodName(wf.metadata.name!), 'hello')).toMatch(
      /hello: "POST \/api\/v1\/template\.execute HTTP\/1\.1" 200 -/,
    );
  }, 300_000);

  it('refuses a plugin that asks for root, naming the field: at submission, and in the controller', async () => {
    await expect(stack.submit(helloWorkflow(asRoot))).rejects.toThrow(ROOT_FIELD);
    // Created behind the server's back: the controller's validation fails it before anything runs.
    const name = await create(stack, helloWorkflow(asRoot));
    const wf = await stack.waitForCompletion(name, 60_000);
    expectPhase(wf, 'Failed');
    expect(wf.status?.message).toContain(`${ROOT_FIELD} is 0 (root); plugins never run as root`);
    expect(wf.status?.message).toContain(
      'spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsNonRoot is false; it must be true (plugins never run as root)',
    );
    const pods = await stack.core.listNamespacedPod({ namespace: stack.namespace, labelSelector: `${LABEL_WORKFLOW}=${name}` });
    expect(pods.items).toEqual([]);
  }, 120_000);

  it('with the gate off refuses the workflow when it starts, naming the field and the gate; nothing runs', async () => {
    const off = await startE2eStack({
      prefix: 'e2e-wfplug-off',
      plugins: true,
      workflowLevelPlugins: false,
      runner: false,
      server: false,
      installNamespace: stack.installNamespace,
    });
    try {
      const name = await off.submit(helloWorkflow());
      const wf = await off.waitForCompletion(name, 60_000);
      expectPhase(wf, 'Failed');
      expect(wf.status?.message).toBe(`invalid spec: spec.executorPlugins ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`);
      expect(wf.status?.message).toContain('WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true');
      expect((await off.core.listNamespacedPod({ namespace: off.namespace })).items).toHaveLength(0);
      const tasksets = (await off.objects.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: off.namespace,
        plural: PLURAL.workflowTaskSet,
      })) as { items: unknown[] };
      expect(tasksets.items).toHaveLength(0);
    } finally {
      await off.stop();
    }
  }, 180_000);
});
