/**
 * The controller's fault tests of issue 4, on a control plane of this file's own (so the API
 * server can be restarted without disturbing other suites), with the local pod runner playing
 * the kubelet:
 *
 * - the controller process is killed (SIGKILL) mid-run and a new one started: every workflow
 *   finishes and no pod is ever created twice (each pod name has exactly one uid);
 * - the API server is restarted mid-run: the watches recover and every workflow finishes;
 * - the API server goes silent (frozen): /readyz fails saying the caches are stale, and
 *   recovers once the server answers again.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { startController } from '../src/controller/controller.js';
import { ControlPlane } from '../src/devenv/control-plane.js';
import { KubeClient } from '../src/kube/client.js';
import { NAMESPACES, PODS, SERVICE_ACCOUNTS, WORKFLOWS } from '../src/kube/resource.js';
import { createLogger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { captureLogger, eventually, spawnControllerProcess, waitForCompletion, workflow } from './controller-harness.js';
import { applyCrds } from './support/apply.js';

/** N sequential steps of `sleep`; long enough to be interrupted, short enough to finish. */
function chain(name: string, steps: number, sleep = '1'): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: Array.from({ length: steps }, (_, i) => [{ name: `s${i}`, template: 'work' }]) },
      { name: 'work', container: { image: 'alpine:3', command: ['sh', '-c', `sleep ${sleep}; echo done`] } },
    ],
  } as Workflow['spec']);
}

/** The pid of this file's own kube-apiserver (found by its unique certificate directory). */
function apiServerPid(plane: ControlPlane): number {
  const line = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .find((l) => l.includes('kube-apiserver') && l.includes(`--cert-dir=${plane.dir}/certs`));
  if (!line) throw new Error('kube-apiserver of this control plane not found');
  return Number(line.trim().split(/\s+/)[0]);
}

/** Every pod ever created in the namespace, by name → the set of uids seen for it. */
function recordPods(client: KubeClient, namespace: string): { uids: Map<string, Set<string>>; stop: () => Promise<void> } {
  const uids = new Map<string, Set<string>>();
  const abort = new AbortController();
  let rv = '';
  const loop = (async () => {
    while (!abort.signal.aborted) {
      await client
        .watch(
          PODS,
          { namespace, resourceVersion: rv || '0', allowWatchBookmarks: true },
          (e) => {
            const meta = (e.object as { metadata?: { name?: string; uid?: string; resourceVersion?: string } }).metadata;
            if (meta?.resourceVersion) rv = meta.resourceVersion;
            if (e.type !== 'ADDED' || !meta?.name || !meta.uid) return;
            let set = uids.get(meta.name);
            if (!set) uids.set(meta.name, (set = new Set()));
            set.add(meta.uid);
          },
          abort.signal,
        )
        .catch(() => new Promise((r) => setTimeout(r, 200)));
    }
  })();
  return {
    uids,
    stop: async () => {
      abort.abort();
      await loop;
    },
  };
}

describe('controller fault tolerance (own control plane)', () => {
  const plane = new ControlPlane();
  let kc: KubeConfig;
  let client: KubeClient;
  let runner: PodRunner;
  const ns = 'faults';

  beforeAll(async () => {
    await plane.start();
    await applyCrds(plane.kubeconfigPath);
    kc = new KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    client = await KubeClient.fromKubeConfig(kc);
    await client.create(NAMESPACES, undefined, { metadata: { name: ns } });
    await eventually(() => client.get(SERVICE_ACCOUNTS, ns, 'default'), 'the default service account');
    runner = new PodRunner({
      kubeConfig: kc,
      dir: mkdtempSync(join(tmpdir(), 'plugflow-faults-runner-')),
      nodeName: 'faults-node',
      namespace: ns,
      log: createLogger('runner', 'warn'),
    });
    await runner.start();
  }, 300_000);

  afterAll(async () => {
    await runner?.stop(1);
    await client?.close();
    await plane.stop();
  });

  it('survives the controller being killed mid-run: all workflows finish, no pod is created twice', async () => {
    const pods = recordPods(client, ns);
    const names = Array.from({ length: 6 }, (_, i) => `killed-${i}`);
    for (const n of names) await client.create(WORKFLOWS, ns, chain(n, 3));

    // The first controller is a real process, so it can really be killed.
    const { child: first, stderr: firstErr } = spawnControllerProcess(plane.kubeconfigPath, ns);
    try {
      // Kill it once work is under way: some pods exist, no workflow has finished all steps.
      await eventually(() => [...pods.uids.keys()].length >= 6, 'pods of the first controller', 60_000);
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    }
    const unfinished = await Promise.all(names.map((n) => client.get<Workflow>(WORKFLOWS, ns, n)));
    expect(
      unfinished.some((wf) => wf.status?.phase === 'Running'),
      firstErr(),
    ).toBe(true);

    const { log } = captureLogger();
    const second = await startController({ kubeConfig: kc, namespace: ns, recordEvents: false, processMetrics: false, log });
    try {
      for (const n of names) expect((await waitForCompletion(client, ns, n, 120_000)).status?.phase).toBe('Succeeded');
    } finally {
      await second.stop();
      await pods.stop();
    }
    expect(pods.uids.size).toBe(names.length * 3);
    const twice = [...pods.uids].filter(([, u]) => u.size > 1).map(([n]) => n);
    expect(twice).toEqual([]);
  });

  it('survives an API server restart mid-run: watches recover and all workflows finish', async () => {
    const { log } = captureLogger();
    const controller = await startController({ kubeConfig: kc, namespace: ns, recordEvents: false, processMetrics: false, log });
    try {
      const names = Array.from({ length: 4 }, (_, i) => `restart-${i}`);
      for (const n of names) await client.create(WORKFLOWS, ns, chain(n, 3, '2'));
      await eventually(async () => {
        const list = await client.list<Workflow>(WORKFLOWS, { namespace: ns });
        return list.items.filter((w) => w.metadata.name?.startsWith('restart-') && w.status?.phase === 'Running').length >= 2;
      }, 'workflows running');
      await plane.restartApiServer(2_000);
      for (const n of names) expect((await waitForCompletion(client, ns, n, 180_000)).status?.phase).toBe('Succeeded');
      const wfInformer = controller.caches.informers().find((i) => i.name === 'workflows')!.informer;
      // The restart broke the watches (errors, or a relist after 410) and they came back.
      expect(wfInformer.stats.watchErrors + wfInformer.stats.relistsOnGone).toBeGreaterThan(0);
      expect(wfInformer.stats.watches).toBeGreaterThan(1);
      expect(controller.readinessProblems()).toEqual([]);
    } finally {
      await controller.stop();
    }
  });

  it('fails /readyz while the API server is silent, naming the stale caches, and recovers', async () => {
    const { log } = captureLogger();
    const controller = await startController({
      kubeConfig: kc,
      namespace: ns,
      metricsPort: 0,
      watchdogMs: 1_500,
      recordEvents: false,
      processMetrics: false,
      log,
    });
    const readyz = () => fetch(`http://127.0.0.1:${controller.metricsPort}/readyz`);
    try {
      await eventually(async () => (await readyz()).status === 200, 'ready');
      const pid = apiServerPid(plane);
      process.kill(pid, 'SIGSTOP');
      try {
        // Each informer's watchdog notices the silence on its own schedule: wait for the one we check.
        await eventually(
          () => controller.readinessProblems().some((p) => p.includes('informer workflows is stale')),
          'stale workflow cache reported',
          20_000,
        );
        const res = await readyz();
        expect(res.status).toBe(503);
        expect(await res.text()).toMatch(/informer workflows is stale/);
        expect((await fetch(`http://127.0.0.1:${controller.metricsPort}/healthz`)).status).toBe(200);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await eventually(async () => (await readyz()).status === 200, 'ready again', 60_000);
    } finally {
      await controller.stop();
    }
  });
});
