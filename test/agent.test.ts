/**
 * The agent process against a real kube-apiserver (RBAC on), acting with a service account that
 * has only the rights the agent needs: it watches its WorkflowTaskSet, runs plugin and http tasks
 * (real plugin servers on loopback, a header from a real Secret), patches results into the status
 * subresource, picks up tasks added later, skips tasks already finished, and stops when the
 * TaskSet is marked completed or deleted. It never logs a token.
 */
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import winston from 'winston';
import { startProgressPlugin } from '../examples/plugins/progress/main.js';
import { Agent, type AgentStopReason } from '../src/agent/agent.js';
import { evaluateSuccessCondition } from '../src/agent/condition.js';
import type { Template, WorkflowTaskSet } from '../src/api/index.js';
import { KubeClient } from '../src/kube/client.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';

const GROUP = 'plugflow.io';
const VERSION = 'v1alpha1';
const PLURAL = 'workflowtasksets';
const PLUGIN_TOKEN = 'plugin-token-never-logged-7c1e';

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function captureLogger(): { log: winston.Logger; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk, _e, cb) {
      out += chunk.toString();
      cb();
    },
  });
  return {
    log: winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] }),
    text: () => out,
  };
}

describe('agent process', () => {
  let ns: string;
  let saToken: string;
  let kube: KubeClient;
  let dir: string;
  let progress: Awaited<ReturnType<typeof startProgressPlugin>>;
  let web: Server;
  let webUrl: string;
  const webHeaders: Array<string | undefined> = [];
  const objects = () => adminKubeConfig().makeApiClient(CustomObjectsApi);

  beforeAll(async () => {
    ns = await createTestNamespace('agent');
    const admin = adminKubeConfig();
    const core = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    // The rights the agent's service account needs, and no more.
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'agent' } } });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'plugflow-agent' },
        rules: [
          { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['patch'] },
          { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'plugflow-agent' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'plugflow-agent' },
        subjects: [{ kind: 'ServiceAccount', name: 'agent', namespace: ns }],
      },
    });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'api' }, stringData: { token: 'header-from-secret' } } });
    saToken = await serviceAccountToken(ns, 'agent');
    kube = await KubeClient.fromKubeConfig(kubeConfigForToken(saToken, 'agent'), { timeoutMs: 10_000 });

    dir = mkdtempSync(join(tmpdir(), 'plugflow-agent-'));
    writeFileSync(join(dir, 'token'), PLUGIN_TOKEN);
    progress = await startProgressPlugin({ port: 0, tokenPath: join(dir, 'token') });
    web = createServer((req, res) => {
      webHeaders.push(req.headers['x-api-key'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('pong');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await kube?.close();
    await progress?.close();
    web?.closeAllConnections();
    await new Promise((r) => web?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (ns) await deleteTestNamespace(ns);
  });

  const TASK_SETS = { group: GROUP, version: VERSION, plural: PLURAL, kind: 'WorkflowTaskSet', namespaced: true };
  const createTaskSet = (name: string, tasks: Record<string, Template>) =>
    objects().createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'WorkflowTaskSet', metadata: { name }, spec: { tasks } },
    });
  const getTaskSet = (name: string) =>
    objects().getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name,
    }) as Promise<WorkflowTaskSet>;
  /** What the controller does with its own rights: add tasks, mark the TaskSet completed. */
  const controllerPatch = async (name: string, body: unknown) => {
    const admin = await KubeClient.fromKubeConfig(adminKubeConfig());
    try {
      await admin.mergePatch(TASK_SETS, ns, name, body);
    } finally {
      await admin.close();
    }
  };

  function startAgent(name: string, log: winston.Logger): { agent: Agent; done: Promise<AgentStopReason> } {
    const agent = new Agent({
      kube,
      workflow: { name, namespace: ns, uid: `uid-${name}` },
      plugins: [
        // Nothing listens for hello: a task naming neither plugin tries it first and fails after retries.
        { name: 'hello', address: 'http://127.0.0.1:1', token: PLUGIN_TOKEN },
        { name: 'progress', address: progress.url, token: PLUGIN_TOKEN },
      ],
      log,
      evaluate: evaluateSuccessCondition,
      concurrency: 4,
      retry: { attempts: 2, baseDelayMs: 20, jitter: 0 },
      patchDelayMs: 20,
    });
    return { agent, done: agent.run() };
  }

  it('runs plugin and http tasks, reports interim progress, takes new tasks and stops when completed', async () => {
    const { log, text } = captureLogger();
    await createTaskSet('wf1', {
      'wf1-job': { name: 'job', plugin: { progress: { steps: 3, every: '400ms' } } },
      'wf1-http': {
        name: 'ping',
        http: {
          url: `${webUrl}/ping`,
          headers: [{ name: 'X-Api-Key', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } }],
          successCondition: 'response.body == "pong"',
        },
      },
    });
    const { agent, done } = startAgent('wf1', log);
    const phases = new Set<string>();
    const final = await eventually(async () => {
      const ts = await getTaskSet('wf1');
      const nodes = ts.status?.nodes ?? {};
      const job = nodes['wf1-job'];
      if (job) phases.add(`${job.phase} ${job.progress ?? ''}`.trim());
      return job?.phase === 'Succeeded' && nodes['wf1-http']?.phase ? nodes : undefined;
    }, 'both tasks finished');
    expect([...phases].some((p) => p.startsWith('Running '))).toBe(true);
    expect(final['wf1-job']).toEqual({
      phase: 'Succeeded',
      message: 'all 3 steps done',
      progress: '3/3',
      outputs: { parameters: [{ name: 'steps', value: '3' }] },
    });
    expect(final['wf1-http']).toEqual({ phase: 'Succeeded', outputs: { result: 'pong' } });
    expect(webHeaders).toEqual(['header-from-secret']);
    expect(agent.ready()).toBe(true);

    // The controller adds a task later.
    await controllerPatch('wf1', { spec: { tasks: { 'wf1-late': { name: 'late', plugin: { nobody: {} } } } } });
    const late = await eventually(async () => (await getTaskSet('wf1')).status?.nodes?.['wf1-late'], 'the late task');
    // progress answers {} for a foreign template; hello cannot be reached (transient, then fatal).
    expect(late.phase).toBe('Failed');

    await controllerPatch('wf1', { metadata: { labels: { 'workflows.plugflow.io/completed': 'true' } } });
    expect(await done).toBe('completed');
    const logs = text();
    expect(logs).toContain('agent starting');
    expect(logs).not.toContain(PLUGIN_TOKEN);
    expect(logs).not.toContain(saToken);
  });

  it('does not run again a task whose status is already final, and stops when the TaskSet is deleted', async () => {
    const { log } = captureLogger();
    const before = progress.jobs.size;
    await createTaskSet('wf2', {
      'wf2-done': { name: 'job', plugin: { progress: { steps: 1 } } },
      'wf2-new': { name: 'job2', plugin: { progress: { steps: 1 } } },
    });
    await kube.mergePatch(
      TASK_SETS,
      ns,
      'wf2',
      { status: { nodes: { 'wf2-done': { phase: 'Succeeded', message: 'from an earlier agent' } } } },
      'status',
    );
    const { done } = startAgent('wf2', log);
    const nodes = await eventually(async () => {
      const n = (await getTaskSet('wf2')).status?.nodes ?? {};
      return n['wf2-new']?.phase === 'Succeeded' ? n : undefined;
    }, 'the new task');
    expect(nodes['wf2-done']).toEqual({ phase: 'Succeeded', message: 'from an earlier agent' });
    expect(progress.jobs.size).toBe(before);
    await objects().deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL, name: 'wf2' });
    expect(await done).toBe('deleted');
  });
});
