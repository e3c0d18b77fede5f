/**
 * `plugflow agent init` and `plugflow agent` as the agent pod runs them: real processes with the
 * arguments the agent pod builder produces, against the real API server. Checks that tokens
 * written by init reach the plugin through the agent, /healthz and /readyz answer, the process
 * exits 0 when the TaskSet is completed, and no token appears in any output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProgressPlugin } from '../examples/plugins/progress/main.js';
import type { WorkflowTaskSet } from '../src/api/index.js';
import { KubeClient } from '../src/kube/client.js';
import { WORKFLOW_TASK_SETS } from '../src/kube/resource.js';
import type { PluginEntry } from '../src/plugins/index.js';
import { agentArgs } from '../src/pods/agent-pod.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

const ROOT = resolve(import.meta.dirname, '..');
const CLI = [join(ROOT, 'node_modules/.bin/tsx'), join(ROOT, 'src/cli/main.ts')];

function run(args: string[], env: NodeJS.ProcessEnv = {}): { proc: ChildProcess; output: () => string; exit: Promise<number> } {
  let out = '';
  const proc = spawn(CLI[0]!, [CLI[1]!, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const exit = new Promise<number>((r) => proc.once('exit', (code) => r(code ?? -1)));
  return { proc, output: () => out, exit };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('plugflow agent (processes)', () => {
  let ns: string;
  let dir: string;
  let admin: KubeClient;
  let kubeconfig: string;

  beforeAll(async () => {
    ns = await createTestNamespace('agent-cli');
    dir = mkdtempSync(join(tmpdir(), 'plugflow-agent-cli-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, adminKubeConfig().exportConfig());
    admin = await KubeClient.fromKubeConfig(adminKubeConfig());
  });
  afterAll(async () => {
    await admin?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (ns) await deleteTestNamespace(ns);
  });

  it('init writes the tokens the agent then uses; the agent serves health and exits when completed', async () => {
    const tokenDir = join(dir, 'tokens');
    const init = run(['agent', 'init', '--token-dir', tokenDir, '--plugin', 'progress']);
    expect(await init.exit).toBe(0);
    const token = readFileSync(join(tokenDir, 'progress', 'token'), 'utf8');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(init.output()).toContain('plugin tokens written');
    expect(init.output()).not.toContain(token);

    // The plugin sidecar sees only its own token file (here: the same file the init wrote).
    const plugin = await startProgressPlugin({ port: 0, tokenPath: join(tokenDir, 'progress', 'token') });
    try {
      await admin.create(WORKFLOW_TASK_SETS, ns, {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'WorkflowTaskSet',
        metadata: { name: 'wf' },
        spec: { tasks: { 'wf-1': { name: 'job', plugin: { progress: { steps: 2, every: '50ms' } } } } },
      });
      const healthPort = await freePort();
      const entry = {
        name: 'progress',
        namespace: ns,
        automountServiceAccountToken: false,
        container: { name: 'progress', ports: [{ containerPort: plugin.port }] },
      } as PluginEntry;
      const args = agentArgs({ metadata: { name: 'wf', namespace: ns, uid: 'u-1' } }, [entry], { image: 'x', healthPort }).map((a) =>
        a === '/var/run/plugflow/tokens' ? tokenDir : a,
      );
      const agent = run([...args, '--kubeconfig', kubeconfig]);
      const health = `http://127.0.0.1:${healthPort}`;
      const deadline = Date.now() + 30_000;
      let nodes: NonNullable<WorkflowTaskSet['status']>['nodes'] = {};
      while (Date.now() < deadline) {
        const ts = await admin.get<WorkflowTaskSet>(WORKFLOW_TASK_SETS, ns, 'wf');
        nodes = ts.status?.nodes ?? {};
        if (nodes['wf-1']?.phase === 'Succeeded') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(nodes['wf-1']).toMatchObject({ phase: 'Succeeded', progress: '2/2' });
      expect((await request(`${health}/healthz`)).statusCode).toBe(200);
      const ready = await request(`${health}/readyz`);
      expect(ready.statusCode).toBe(200);
      await ready.body.dump();
      const metrics = await (await request(`${health}/metrics`)).body.text();
      expect(metrics).toMatch(/plugflow_agent_plugin_calls_total\{plugin="progress",outcome="reply"\} 2/);

      await admin.mergePatch(WORKFLOW_TASK_SETS, ns, 'wf', { metadata: { labels: { 'workflows.plugflow.io/completed': 'true' } } });
      expect(await agent.exit).toBe(0);
      expect(agent.output()).toContain('"reason":"completed"');
      expect(agent.output()).not.toContain(token);
    } finally {
      await plugin.close();
    }
  });
});
