/**
 * plugflow on a real node (hack/node/up.sh: containerd, runc, bridge CNI, kubelet, kube-proxy),
 * installed the way the README says — `kubectl apply` of manifests/install.yaml with the image
 * `make image` built — and used the way people use it: workflows, executor plugins turned on with
 * `kubectl set env`, events through the server's Service. Pods here have real images, cgroups,
 * probes and networking, which the local pod runner of the other suites does not.
 *
 * Skipped, with the reason printed, where the node cannot start (no root, containerd, CNI plugins
 * or image archives). About 4 minutes when it runs (node start ~10 s, stop ~15 s).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readYamlDocuments } from '../../src/yaml/kube-yaml.js';
import { REPO_ROOT } from '../support/apply.js';
import { forRegistrylessNode, NodeCluster, nodeUnavailableReason } from '../../src/devenv/node-cluster.js';

const run = promisify(execFile);
const reason = await nodeUnavailableReason();
if (reason) console.log(`[node suite] skipped: ${reason}`);

const NS = 'node-e2e';
const SYSTEM = 'plugflow';

describe.skipIf(reason !== undefined)('plugflow installed on a real node', () => {
  const node = new NodeCluster();

  beforeAll(async () => {
    await node.start();
    await node.kubectl(['create', 'namespace', NS]);
    // The agent's account, as the README's install section says, for plugin steps in NS.
    await node.kubectl(['create', 'serviceaccount', 'plugflow-agent', '-n', NS]);
    await node.kubectl([
      'create',
      'rolebinding',
      'plugflow-agent',
      '-n',
      NS,
      '--clusterrole=plugflow-agent',
      `--serviceaccount=${NS}:plugflow-agent`,
    ]);
  }, 600_000);
  afterAll(async () => {
    await node.stop();
  }, 300_000);

  it('manifests/install.yaml applies and both Deployments roll out with their probes passing', async () => {
    await node.kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'manifests/install.yaml')]);
    for (const d of ['plugflow-controller', 'plugflow-server']) {
      await node.kubectl(['-n', SYSTEM, 'rollout', 'status', `deploy/${d}`, '--timeout=180s']).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await node.snapshot()}`);
      });
      const [want, ready] = (await node.get(['deploy', d, '-n', SYSTEM], '{.spec.replicas} {.status.readyReplicas}')).split(' ');
      expect(ready, `${d} ready replicas`).toBe(want);
    }
    // Ready means the readiness probes (/readyz over HTTP and HTTPS) answered on the pods' own IPs.
    const ips = await node.get(['pods', '-n', SYSTEM], '{.items[*].status.podIP}');
    expect(
      ips.split(' ').every((ip) => ip.startsWith('10.88.')),
      ips,
    ).toBe(true);
  }, 240_000);

  it('runs every example workflow to its documented end', async () => {
    const files = readdirSync(join(REPO_ROOT, 'examples/workflows'))
      .filter((f) => f.endsWith('.yaml') && f !== 'suspend-resume.yaml')
      .map((f) => `examples/workflows/${f}`);
    const names = await Promise.all(files.map(async (f) => [f, await node.submit(f, NS)] as const));
    const results = await Promise.all(names.map(async ([f, name]) => ({ f, name, ...(await node.finished(name, NS, 240_000)) })));
    for (const r of results) {
      // exit-handler.yaml fails its main step on purpose (its handler still runs).
      const want = r.f.endsWith('exit-handler.yaml') ? 'Failed' : 'Succeeded';
      expect(r.phase, `${r.f} (${r.name}): ${r.message}`).toBe(want);
    }
  }, 300_000);

  it('turns on executor plugins with kubectl set env and runs the sample plugin workflow', async () => {
    await node.kubectl(['-n', SYSTEM, 'set', 'env', 'deploy/plugflow-controller', 'WORKFLOW_EXECUTOR_PLUGINS=true']);
    await node.kubectl(['-n', SYSTEM, 'rollout', 'status', 'deploy/plugflow-controller', '--timeout=180s']);
    await node.kubectl(['apply', '-n', SYSTEM, '-f', join(REPO_ROOT, 'examples/plugins/hello/hello-executor-plugin-configmap.yaml')]);
    await node.waitFor(
      '"Executor plugin added" in the controller log',
      async () => {
        const log = await node.kubectl(['-n', SYSTEM, 'logs', 'deploy/plugflow-controller']).catch(() => '');
        return log.includes('Executor plugin added') && log.includes('"name":"hello"') ? true : undefined;
      },
      60_000,
    );
    const name = await node.submit('examples/plugins/hello/workflow.yaml', NS);
    const r = await node.finished(name, NS);
    expect(r.phase, r.message).toBe('Succeeded');
    const outputs = (await node.workflowNodes(name, NS)).map((n) => JSON.stringify(n.outputs ?? {}));
    expect(outputs.join(' ')).toContain('Ada');
  }, 300_000);

  it('a step over its memory limit is killed by the kernel and ends OOMKilled', async () => {
    const wf = {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { generateName: 'oom-' },
      spec: {
        entrypoint: 'hog',
        templates: [
          {
            name: 'hog',
            container: {
              image: 'busybox:1.36',
              command: ['sh', '-c', 'tail /dev/zero'],
              resources: { limits: { memory: '48Mi' } },
            },
          },
        ],
      },
    };
    const name = (await node.kubectl(['create', '-n', NS, '-o', 'name', '-f', '-'], JSON.stringify(forRegistrylessNode(wf))))
      .trim()
      .split('/')
      .pop() as string;
    const r = await node.finished(name, NS);
    const messages = (await node.workflowNodes(name, NS)).map((n) => `${n.type} ${n.phase} ${n.message ?? ''}`).join('; ');
    expect(r.phase, `${r.message}; nodes: ${messages}`).toBe('Failed');
    expect(messages).toContain('OOMKilled');
  }, 180_000);

  it('a controller pod deleted mid-run is replaced by its Deployment and the workflow finishes with each step run once', async () => {
    const step = (n: number) => [{ name: `s${n}`, template: 'nap' }];
    const wf = {
      apiVersion: 'plugflow.io/v1alpha1',
      kind: 'Workflow',
      metadata: { generateName: 'survive-' },
      spec: {
        entrypoint: 'main',
        templates: [
          { name: 'main', steps: [step(1), step(2), step(3)] },
          { name: 'nap', container: { image: 'busybox:1.36', command: ['sh', '-c', 'sleep 3; echo done'] } },
        ],
      },
    };
    const name = (await node.kubectl(['create', '-n', NS, '-o', 'name', '-f', '-'], JSON.stringify(forRegistrylessNode(wf))))
      .trim()
      .split('/')
      .pop() as string;
    await node.waitFor('the first step pod to run', async () =>
      (await node.get(['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`], '{.items[*].status.phase}')).includes('Running')
        ? true
        : undefined,
    );
    const old = await node.get(['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-controller'], '{.items[0].metadata.name}');
    await node.kubectl(['delete', 'pod', '-n', SYSTEM, old, '--wait=false']);
    const r = await node.finished(name, NS, 240_000);
    expect(r.phase, r.message).toBe('Succeeded');
    const pods = (await node.get(['pods', '-n', NS, '-l', `workflows.plugflow.io/workflow=${name}`], '{.items[*].metadata.name}')).split(
      ' ',
    );
    expect(pods, 'one pod per step: none lost, none run twice').toHaveLength(3);
    const now = await node.get(['pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=plugflow-controller'], '{.items[*].metadata.name}');
    expect(now).not.toContain(old);
  }, 300_000);

  it('the event endpoint answers through the server Service and its binding submits a workflow', async () => {
    for (const f of ['workflow-template.yaml', 'binding.yaml', 'rbac.yaml']) {
      const text = readFileSync(join(REPO_ROOT, 'examples/events', f), 'utf8');
      for (const doc of readYamlDocuments(text, f) as Record<string, unknown>[]) {
        await node.kubectl(['apply', '-n', NS, '-f', '-'], JSON.stringify(forRegistrylessNode(doc)));
      }
    }
    const token = (await node.kubectl(['create', 'token', '-n', NS, 'event-sender'])).trim();
    const ip = await node.get(['svc', 'plugflow-server', '-n', SYSTEM], '{.spec.clusterIP}');
    const url = `https://${ip}:2746/api/v1/events/${NS}/`;
    const selector = 'workflows.plugflow.io/workflow-event-binding=greet-on-push';
    // The servers learn of the new binding through their watch: send until one submits.
    const name = await node.waitFor(
      'a workflow submitted by the event',
      async () => {
        const { stdout } = await run('curl', [
          '-sS',
          '-k',
          '-w',
          ' %{http_code}',
          url,
          '-H',
          `Authorization: Bearer ${token}`,
          '-H',
          'Content-Type: application/json',
          '-H',
          'X-Event-Type: push',
          '--data-binary',
          `@${join(REPO_ROOT, 'examples/events/event.json')}`,
        ]);
        expect(stdout.trim().split(' ').pop(), stdout).toBe('200');
        await new Promise((r) => setTimeout(r, 1000));
        return (await node.get(['workflows', '-n', NS, '-l', selector], '{.items[0].metadata.name}')) || undefined;
      },
      60_000,
    );
    const r = await node.finished(name, NS);
    expect(r.phase, r.message).toBe('Succeeded');
  }, 240_000);
});
