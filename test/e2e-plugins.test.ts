/**
 * Executor plugins end to end (issue 5), through the real API server with the local pod runner
 * playing the kubelet of the agent pod:
 *
 * - the Python `hello` example is built with `plugflow plugin build` (on a copy of its
 *   directory), applied to the installation namespace, logged as added by the controller,
 *   called by the agent, and its workflow Succeeds with the plugin's message and output;
 * - the TypeScript `progress` example (requeue) Succeeds after several polls, with 1/3 and 2/3
 *   visible on the node in between;
 * - a workflow-namespace plugin shadows an installation-namespace plugin of the same name;
 * - with the gate off the plugin step fails with the explanatory message.
 */
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_WORKFLOW, PLURAL, VERSION, type Workflow } from '../src/api/index.js';
import { runPluginBuild } from '../src/cli/plugin.js';
import { renderTree } from '../src/cli/tree.js';
import { REPO_ROOT } from '../src/devenv/dev-stack.js';
import { CLI_DIR } from '../src/runner/shim.js';
import { PLUGINS_DISABLED_MESSAGE } from '../src/engine/index.js';
import { parseManifests } from '../src/kube/apply.js';
import { buildPlugin } from '../src/plugins/index.js';
import { agentPodName } from '../src/pods/agent-pod.js';
import {
  agentSlot,
  applyInto,
  expectPhase,
  nodeNamed,
  nodesNamed,
  outputParameter,
  pythonPlugin,
  recordWorkflows,
  startE2eStack,
  waitFor,
  waitForPluginLog,
  type E2eStack,
} from './support/e2e.js';

const PLUGINS = join(REPO_ROOT, 'examples', 'plugins');
const HELLO_PORT = 4355;
const PROGRESS_PORT = 7422;
const SHADOW_PORT = 4371;

let stack: E2eStack;

/** `plugflow plugin build` on a copy of an example plugin directory; returns the ConfigMap manifest text. */
function buildCopy(example: string, edit?: (pluginYaml: string) => string): { configMapYaml: string; printed: string[] } {
  const tmp = mkdtempSync(join(tmpdir(), `plugflow-e2e-${example}-`));
  try {
    const dir = join(tmp, example);
    cpSync(join(PLUGINS, example), dir, { recursive: true });
    if (edit) writeFileSync(join(dir, 'plugin.yaml'), edit(readFileSync(join(dir, 'plugin.yaml'), 'utf8')));
    const printed: string[] = [];
    const code = runPluginBuild(dir, { out: (l) => printed.push(l), err: (l) => printed.push(l) });
    expect(code, printed.join('\n')).toBe(0);
    return { configMapYaml: readFileSync(join(dir, `${example}-executor-plugin-configmap.yaml`), 'utf8'), printed };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function exampleWorkflow(example: string): Workflow {
  return parse(readFileSync(join(PLUGINS, example, 'workflow.yaml'), 'utf8')) as Workflow;
}

/** Runs a plugin workflow holding the agent slot; returns the finished workflow. */
async function runPluginWorkflow(wf: Workflow, ports: number[], during?: (name: string) => Promise<void>): Promise<Workflow> {
  const release = await agentSlot(ports);
  try {
    const name = await stack.submit(wf);
    const watching = during?.(name);
    const done = await stack.waitForCompletion(name, 150_000);
    await watching;
    // The agent pod goes away with the workflow's completion (its processes stop with it).
    await waitFor(
      `the agent pod of ${name} to be deleted`,
      async () =>
        (
          await stack.core.listNamespacedPod({
            namespace: stack.namespace,
            labelSelector: `${LABEL_WORKFLOW}=${name},workflows.plugflow.io/component=agent`,
          })
        ).items.length === 0,
      { timeoutMs: 60_000, describe: () => stack.describe(name) },
    );
    return done;
  } finally {
    release();
  }
}

type ConfigMapDoc = KubernetesObject & { metadata: { name: string } };

/**
 * Installs plugin ConfigMaps (namespace → manifests), waits for the controller's "added" lines,
 * runs `fn`, and always uninstalls them again (waiting for "removed"), so every test's agent pod
 * has exactly its own plugins.
 */
async function withPlugins<T>(installs: Array<[namespace: string, configMap: KubernetesObject]>, fn: () => Promise<T>): Promise<T> {
  const applied: Array<[string, ConfigMapDoc]> = [];
  try {
    for (const [ns, cm] of installs) {
      await applyInto(stack.admin, ns, [cm]);
      applied.push([ns, cm as ConfigMapDoc]);
    }
    for (const [ns, cm] of applied) await waitForPluginLog(stack, 'added', ns, pluginName(cm));
    return await fn();
  } finally {
    for (const [ns, cm] of applied) await stack.core.deleteNamespacedConfigMap({ name: cm.metadata.name, namespace: ns }).catch(() => {});
    for (const [ns, cm] of applied) await waitForPluginLog(stack, 'removed', ns, pluginName(cm));
  }
}

const pluginName = (cm: KubernetesObject) => cm.metadata!.name!.replace(/-executor-plugin$/, '');

/** A container's log kept by the runner (the pod itself may be gone). */
const containerLog = (pod: string, container: string) => stack.runner!.readLog(stack.namespace, pod, container);

beforeAll(async () => {
  stack = await startE2eStack({ prefix: 'e2e-plug' });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

describe('executor plugins end to end', () => {
  it('hello: built, applied, logged as added, called by the agent; the workflow Succeeds with its message and output', async () => {
    const built = buildCopy('hello');
    // The build of the checked-in sources reproduces the checked-in ConfigMap.
    expect(built.configMapYaml).toBe(readFileSync(join(PLUGINS, 'hello', 'hello-executor-plugin-configmap.yaml'), 'utf8'));
    expect(built.printed.join('\n')).toContain('plugin hello (server file server.py → sidecar args)');
    const [cm] = parseManifests(built.configMapYaml);
    const wf = await withPlugins([[stack.installNamespace, cm!]], async () => {
      const added = await waitForPluginLog(stack, 'added', stack.installNamespace, 'hello');
      expect(added).toMatchObject({ level: 'info', plugin: 'hello' });
      return runPluginWorkflow(exampleWorkflow('hello'), [HELLO_PORT]);
    });
    expectPhase(wf, 'Succeeded');
    const greet = nodeNamed(wf, 'greet');
    expect(greet).toMatchObject({ type: 'Plugin', phase: 'Succeeded', message: 'Hello, Ada!' });
    expect(outputParameter(greet, 'greeting')).toBe('Hello, Ada!');
    const show = nodeNamed(wf, 'show');
    expect(show).toMatchObject({ type: 'Pod', phase: 'Succeeded' });
    expect(show.outputs?.result).toBe('Hello, Ada!');

    // The agent made the call: the plugin's own access log, kept by the runner.
    const pod = agentPodName(wf.metadata.name!);
    const pluginLog = containerLog(pod, 'hello');
    expect(pluginLog).toMatch(/hello plugin listening on 127\.0\.0\.1:4355/);
    expect(pluginLog).toMatch(/hello: "POST \/api\/v1\/template\.execute HTTP\/1\.1" 200 -/);
    await waitForPluginLog(stack, 'removed', stack.installNamespace, 'hello');
  }, 240_000);

  it('progress: Running with 1/3 and 2/3 between polls, then Succeeded 3/3 with its output', async () => {
    // The image's working directory is the repository (plugin.yaml: "run from the plugflow
    // image, which holds the repository ... in its working directory"); the runner ignores
    // images, so the copy names where every container sees this package (wherever the
    // checkout is: a 0700 home, /tmp).
    const built = buildCopy('progress', (text) => {
      const doc = parseDocument(text);
      doc.setIn(['spec', 'sidecar', 'container', 'workingDir'], CLI_DIR);
      return doc.toString();
    });
    const cm = parseManifests(built.configMapYaml);
    expect(parse((cm[0] as { data: Record<string, string> }).data['sidecar.container'])).toMatchObject({
      command: ['npx', 'tsx', 'examples/plugins/progress/main.ts'],
      workingDir: CLI_DIR,
    });
    // Every version of the workflow, through a watch: the job node's progress while it runs.
    const recorder = await recordWorkflows(stack.admin, stack.namespace);
    let wf: Workflow;
    try {
      wf = await withPlugins([[stack.installNamespace, cm[0]!]], () => runPluginWorkflow(exampleWorkflow('progress'), [PROGRESS_PORT]));
    } finally {
      recorder.stop();
    }
    expectPhase(wf, 'Succeeded');
    const seen: string[] = [];
    for (const version of recorder.versions(wf.metadata.name!)) {
      const job = nodesNamed(version, 'job')[0];
      if (job?.phase === 'Running' && job.progress && seen.at(-1) !== job.progress) seen.push(job.progress);
    }
    expect(seen, renderTree(wf)).toEqual(['1/3', '2/3']);
    const job = nodeNamed(wf, 'job');
    expect(job).toMatchObject({ type: 'Plugin', phase: 'Succeeded', message: 'all 3 steps done', progress: '3/3' });
    expect(outputParameter(job, 'steps')).toBe('3');
    // Three polls, two seconds apart.
    expect(Date.parse(job.finishedAt!) - Date.parse(job.startedAt!)).toBeGreaterThanOrEqual(4000);
    expect(nodeNamed(wf, 'report').outputs?.result).toBe('job finished after 3 steps');
    // The workflow counts the plugin's three steps and the report pod.
    expect(wf.status?.progress).toBe('4/4');
  }, 240_000);

  it("a workflow-namespace plugin shadows the installation namespace's plugin of the same name", async () => {
    const reply = (who: string) =>
      `def execute(config, args):\n    return {"node": {"phase": "Succeeded", "message": "answered by the ${who} plugin"}}`;
    const install = buildPlugin(pythonPlugin({ name: 'shadow', port: SHADOW_PORT, execute: reply('installation namespace') })).configMap;
    const local = buildPlugin(pythonPlugin({ name: 'shadow', port: SHADOW_PORT, execute: reply('workflow namespace') })).configMap;
    let agentPod: V1Pod | undefined;
    const wf = await withPlugins(
      [
        [stack.installNamespace, install],
        [stack.namespace, local],
      ],
      () =>
        runPluginWorkflow(
          {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: 'Workflow',
            metadata: { generateName: 'shadow-' },
            spec: { entrypoint: 'ask', templates: [{ name: 'ask', plugin: { shadow: {} } }] },
          } as Workflow,
          [SHADOW_PORT],
          async (name) => {
            agentPod = await waitFor(
              `the agent pod of ${name}`,
              () => stack.core.readNamespacedPod({ name: agentPodName(name), namespace: stack.namespace }),
              { everyMs: 100 },
            );
          },
        ),
    );
    expectPhase(wf, 'Succeeded');
    expect(nodeNamed(wf, wf.metadata.name!)).toMatchObject({
      type: 'Plugin',
      phase: 'Succeeded',
      message: 'answered by the workflow namespace plugin',
    });
    // The agent pod had one `shadow` sidecar: the workflow namespace's (its log has the one call).
    const sidecars = agentPod!.spec!.containers.filter((c) => c.name !== 'main');
    expect(sidecars.map((c) => c.name)).toEqual(['shadow']);
    expect(sidecars[0]!.args?.[0]).toContain('answered by the workflow namespace plugin');
    const log = containerLog(agentPodName(wf.metadata.name!), 'shadow');
    expect(log.match(/POST \/api\/v1\/template\.execute/g)).toHaveLength(1);
  }, 240_000);

  it('with the gate off, the plugin step fails with the explanatory message and no agent runs', async () => {
    const off = await startE2eStack({
      prefix: 'e2e-plug-off',
      plugins: false,
      runner: false,
      server: false,
      installNamespace: stack.installNamespace,
    });
    try {
      const name = await off.submit(exampleWorkflow('hello'));
      const wf = await off.waitForCompletion(name, 60_000);
      expectPhase(wf, 'Failed');
      const greet = nodeNamed(wf, 'greet');
      expect(greet).toMatchObject({ type: 'Plugin', phase: 'Failed', message: PLUGINS_DISABLED_MESSAGE });
      expect(PLUGINS_DISABLED_MESSAGE).toContain('WORKFLOW_EXECUTOR_PLUGINS=true');
      expect(nodesNamed(wf, 'show')).toHaveLength(0);
      expect(wf.status?.message).toContain(PLUGINS_DISABLED_MESSAGE);
      expect((await off.core.listNamespacedPod({ namespace: off.namespace })).items).toHaveLength(0);
      const tasksets = (await off.objects.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: off.namespace,
        plural: PLURAL.workflowTaskSet,
      })) as { items: unknown[] };
      expect(tasksets.items).toHaveLength(0);
      // Nothing is watched with the gate off: not even the installation namespace's plugins.
      expect(off.controllerLog.filter((l) => String(l.message).startsWith('Executor plugin'))).toEqual([]);
    } finally {
      await off.stop();
    }
  }, 180_000);
});
