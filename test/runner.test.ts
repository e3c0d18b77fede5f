/**
 * The local pod runner against a real API server: binding, init containers, sidecars, volumes,
 * environment, exit codes, termination messages, logs, deletion, and a complete step pod built
 * by buildStepPod whose outputs observePod reads back.
 */
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { createLogger } from '../src/log/logger.js';
import { buildStepPod } from '../src/pods/build-pod.js';
import { observePod } from '../src/pods/observe-pod.js';
import { PodRunner } from '../src/runner/runner.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

let ns: string;
let core: CoreV1Api;
let runner: PodRunner;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const readPod = (name: string) => core.readNamespacedPod({ name, namespace: ns });

/** Waits until the pod reaches a final phase and returns it. */
function finished(name: string, timeoutMs = 90_000): Promise<V1Pod> {
  return waitFor(
    `pod ${name} to finish`,
    async () => {
      const pod = await readPod(name);
      return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' ? pod : undefined;
    },
    timeoutMs,
  );
}

const state = (pod: V1Pod, name: string, init = false) =>
  (init ? pod.status?.initContainerStatuses : pod.status?.containerStatuses)?.find((s) => s.name === name)?.state;

beforeAll(async () => {
  ns = await createTestNamespace('runner');
  core = adminKubeConfig().makeApiClient(CoreV1Api);
  // Pods need the namespace's default service account, which a controller creates.
  await waitFor('the default service account', () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }));
  runner = new PodRunner({
    kubeConfig: adminKubeConfig(),
    dir: mkdtempSync(join(tmpdir(), 'plugflow-runner-')),
    nodeName: `runner-${ns}`,
    namespace: ns,
    log: createLogger('runner-test', process.env.PLUGFLOW_LOG_LEVEL ?? 'warn'),
  });
  await runner.start();
}, 180_000);

afterAll(async () => {
  await runner?.stop(1);
  await core?.deleteNode({ name: `runner-${ns}` }).catch(() => {});
  await deleteTestNamespace(ns);
});

describe('local pod runner', () => {
  it('registers a ready node with a lease', async () => {
    const node = await core.readNode({ name: runner.nodeName });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const { CoordinationV1Api } = await import('@kubernetes/client-node');
    const lease = await adminKubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: runner.nodeName, namespace: 'kube-node-lease' });
    expect(lease.spec?.holderIdentity).toBe(runner.nodeName);
    expect(runner.namespacesEnabled).toBe(process.getuid?.() === 0);
  });

  it('binds and runs init containers, containers and a sidecar with volumes, env, exit codes, messages and logs', async () => {
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'cfg' }, data: { greeting: 'hello from a configmap', color: 'blue' } },
    });
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'sec' }, stringData: { password: 's3cret' } } });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'mixed', labels: { app: 'mixed' } },
        spec: {
          restartPolicy: 'Never',
          volumes: [
            { name: 'work', emptyDir: {} },
            { name: 'cfg', configMap: { name: 'cfg' } },
            { name: 'sec', secret: { secretName: 'sec' } },
            { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          ],
          initContainers: [
            {
              name: 'setup',
              image: 'busybox',
              command: ['sh', '-c', 'echo init-ran > /work/init.txt'],
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            },
          ],
          containers: [
            {
              name: 'main',
              image: 'busybox',
              command: ['sh', '-c'],
              args: [
                [
                  'echo written > /tmp/private.txt',
                  'cat /work/init.txt',
                  'cat /etc/cfg/greeting; echo',
                  'cat /etc/sec/password; echo',
                  'cat /etc/info/labels; echo',
                  'echo "env: $COLOR $POD_NAME $(COLOR)"',
                  "echo 'escaped: $$(COLOR)'",
                  'cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo',
                  'test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-present',
                  'printf "main says bye" > /dev/termination-log',
                  'exit 3',
                ].join('; '),
              ],
              env: [
                { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              volumeMounts: [
                { name: 'work', mountPath: '/work' },
                { name: 'cfg', mountPath: '/etc/cfg', readOnly: true },
                { name: 'sec', mountPath: '/etc/sec', readOnly: true },
                { name: 'info', mountPath: '/etc/info' },
              ],
            },
            { name: 'side', image: 'busybox', command: ['sh', '-c', 'echo sidecar-ran; sleep 1; test ! -e /tmp/private.txt'] },
          ],
        },
      },
    });
    const pod = await finished('mixed');
    expect(pod.spec?.nodeName).toBe(runner.nodeName);
    expect(pod.status?.phase).toBe('Failed');
    expect(pod.status?.podIP).toBe('127.0.0.1');
    expect(state(pod, 'setup', true)?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(state(pod, 'main')?.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: 'main says bye' });
    // The sidecar has its own /tmp: the main container's file is not there.
    expect(state(pod, 'side')?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });

    const log = runner.readLog(ns, 'mixed', 'main');
    if (runner.namespacesEnabled) {
      expect(log).toContain('init-ran');
      expect(log).toContain('hello from a configmap');
      expect(log).toContain('s3cret');
      expect(log).toContain('app="mixed"');
      expect(log).toContain(ns);
      expect(log).toContain('token-present');
    }
    // $(COLOR) was expanded by the runner (as a kubelet does), $$(COLOR) became a literal $(COLOR).
    expect(log).toContain('env: blue mixed blue\n');
    expect(log).toContain('escaped: $(COLOR)\n');
    expect(runner.readLog(ns, 'mixed', 'side')).toContain('sidecar-ran');
    // Through the API server's pods/log, which calls the runner's kubelet endpoint.
    expect(await core.readNamespacedPodLog({ name: 'mixed', namespace: ns, container: 'side' })).toBe('sidecar-ran\n');
    expect(await core.readNamespacedPodLog({ name: 'mixed', namespace: ns, container: 'main', tailLines: 1 })).toBe('token-present\n');
    expect(runner.readLog(ns, 'mixed', 'setup')).toBe('');
  });

  it('keeps a pod with a missing config map waiting, then runs it once the map exists', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'needs-cm' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'x',
              command: ['sh', '-c', 'echo "$V"'],
              env: [{ name: 'V', valueFrom: { configMapKeyRef: { name: 'late', key: 'v' } } }],
            },
          ],
        },
      },
    });
    const waiting = await waitFor('CreateContainerConfigError', async () => {
      const s = state(await readPod('needs-cm'), 'c')?.waiting;
      return s?.reason === 'CreateContainerConfigError' ? s : undefined;
    });
    expect(waiting.message).toContain('configmap "late" not found');
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'late' }, data: { v: 'arrived' } } });
    const pod = await finished('needs-cm');
    expect(pod.status?.phase).toBe('Succeeded');
    expect(runner.readLog(ns, 'needs-cm', 'c')).toBe('arrived\n');
  });

  it('restarts a failed container under restartPolicy OnFailure', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'flaky' },
        spec: {
          restartPolicy: 'OnFailure',
          volumes: [{ name: 'state', emptyDir: {} }],
          containers: [
            {
              name: 'c',
              image: 'x',
              // Fails the first time, succeeds the second: the emptyDir outlives the restart.
              command: ['sh', '-c', 'if [ -e /state/ran ]; then echo second; else touch /state/ran; echo first; exit 7; fi'],
              volumeMounts: [{ name: 'state', mountPath: '/state' }],
            },
          ],
        },
      },
    });
    const pod = await finished('flaky');
    const status = pod.status?.containerStatuses?.[0];
    expect(pod.status?.phase).toBe('Succeeded');
    expect(status?.restartCount).toBe(1);
    expect(status?.lastState?.terminated).toMatchObject({ exitCode: 7, reason: 'Error' });
    expect(runner.readLog(ns, 'flaky', 'c')).toBe('first\nsecond\n');
  });

  it("follows a running container's log through pods/log until the container ends", async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'talker' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x', command: ['sh', '-c', 'echo one; sleep 2; echo two'] }] },
      },
    });
    await waitFor('the pod to run', async () => ((await readPod('talker')).status?.phase === 'Running' ? true : undefined));
    expect(await core.readNamespacedPodLog({ name: 'talker', namespace: ns, container: 'c', follow: true })).toBe('one\ntwo\n');
  });

  it('does not bind a pod that does not fit the node and says why', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'elsewhere' },
        spec: { nodeSelector: { disk: 'none' }, containers: [{ name: 'c', image: 'x', command: ['true'] }] },
      },
    });
    const cond = await waitFor('PodScheduled=False', async () =>
      (await readPod('elsewhere')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'),
    );
    expect(cond.message).toMatch(/nodeSelector disk=none/);
    expect((await readPod('elsewhere')).spec?.nodeName).toBeFalsy();
  });

  it('runs a pod whose nodeSelector names the standard kubelet labels (os, arch, hostname, beta forms)', async () => {
    const arch = process.arch === 'x64' ? 'amd64' : process.arch;
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'selects-linux' },
        spec: {
          restartPolicy: 'Never',
          nodeSelector: {
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': arch,
            'beta.kubernetes.io/os': 'linux',
            'beta.kubernetes.io/arch': arch,
            'kubernetes.io/hostname': runner.nodeName,
          },
          containers: [{ name: 'c', image: 'x', command: ['true'] }],
        },
      },
    });
    const pod = await finished('selects-linux');
    expect(pod.spec?.nodeName).toBe(runner.nodeName);
    expect(pod.status?.phase).toBe('Succeeded');
  });

  it('keeps a pod whose port another running pod declares waiting (one shared network), then runs it', async () => {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const server = (name: string, seconds: number) => ({
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'c',
            image: 'x',
            ports: [{ containerPort: port }],
            command: [
              'python3',
              '-c',
              `import socket,time;s=socket.socket();s.bind(("127.0.0.1",${port}));s.listen();time.sleep(${seconds})`,
            ],
          },
        ],
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: server('port-first', 4) });
    await waitFor('the first pod to run', async () => ((await readPod('port-first')).status?.phase === 'Running' ? true : undefined));
    await core.createNamespacedPod({ namespace: ns, body: server('port-second', 0) });
    const waiting = await waitFor('the second pod to be held back', async () => {
      const c = (await readPod('port-second')).status?.conditions?.find((x) => x.type === 'PodScheduled');
      return c?.status === 'False' ? c : undefined;
    });
    expect(waiting.message).toContain(`port ${port} is in use by pod ${ns}/port-first`);
    const first = await finished('port-first');
    const second = await finished('port-second');
    expect(first.status?.phase).toBe('Succeeded');
    // Had both run at once, the second bind would have failed with EADDRINUSE.
    expect(second.status?.phase).toBe('Succeeded');
  });

  it('kills the processes of a deleted pod and removes the pod', async () => {
    const marker = String(900_000 + Math.floor(Math.random() * 99_999));
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'doomed' },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'x', command: ['sh', '-c', `sleep ${marker} & sleep ${marker}`] }],
        },
      },
    });
    await waitFor('the pod to run', async () => ((await readPod('doomed')).status?.phase === 'Running' ? true : undefined));
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker}`])
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    // Both sleeps (plus the shell and unshare, whose command lines mention them).
    await waitFor('the processes', async () => (running() >= 2 ? true : undefined));
    await core.deleteNamespacedPod({ name: 'doomed', namespace: ns, gracePeriodSeconds: 2 });
    await waitFor('the pod to be removed', async () => {
      try {
        await readPod('doomed');
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
    expect(running()).toBe(0);
  });

  it('runs a step pod from buildStepPod and observePod reads its outputs', async () => {
    const custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const wf = (await custom.createNamespacedCustomObject({
      group: 'plugflow.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'workflows',
      body: {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'steps' },
        spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
      },
    })) as Workflow;
    const pod = buildStepPod({
      workflow: wf,
      nodeId: 'steps-1',
      podName: 'steps-main-1',
      executorImage: 'plugflow:dev',
      template: {
        name: 'gen',
        script: {
          image: 'python:3',
          command: ['sh'],
          source: ["echo 'literal: $(HOME) $$'", 'echo "result-line"', 'printf 42 > /tmp/answer'].join('\n'),
        },
        outputs: { parameters: [{ name: 'answer', valueFrom: { path: '/tmp/answer' } }] },
        sidecars: [{ name: 'helper', image: 'busybox', command: ['sh', '-c', 'while true; do sleep 1; done'] }],
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: pod });
    // A retried create of the same pod is harmless: same name, same spec, 409.
    await expect(core.createNamespacedPod({ namespace: ns, body: pod })).rejects.toMatchObject({ code: 409 });

    const done = await finished('steps-main-1', 120_000);
    const obs = observePod(done);
    expect(obs, JSON.stringify(done.status, null, 1)).toMatchObject({
      podName: 'steps-main-1',
      nodeId: 'steps-1',
      phase: 'Succeeded',
      outputs: { exitCode: '0', result: 'literal: $(HOME) $$\nresult-line', parameters: [{ name: 'answer', value: '42' }] },
    });
    expect(obs.startedAt).toBeDefined();
    expect(obs.finishedAt).toBeDefined();
    // The sidecar was stopped because the main container finished, and that is not a failure.
    expect(state(done, 'helper')?.terminated?.exitCode).toBe(0);
    expect(runner.readLog(ns, 'steps-main-1', 'main')).toContain('result-line');
  });

  it("runs a script in the image's working directory: / by default (a relative result.txt is /result.txt), else workingDir", async () => {
    const custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const wf = (await custom.createNamespacedCustomObject({
      group: 'plugflow.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'workflows',
      body: {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'cwd' },
        spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
      },
    })) as Workflow;
    // `/` is the host's here: the name carries the namespace so concurrent runs do not meet.
    const file = `result-${ns}.txt`;
    rmSync(`/${file}`, { force: true });
    const script = (podName: string, workingDir?: string, path = `/${file}`) =>
      buildStepPod({
        workflow: wf,
        nodeId: podName,
        podName,
        executorImage: 'plugflow:dev',
        template: {
          name: 'write',
          script: { image: 'python:3', command: ['sh'], source: `printf written > ${file}\npwd`, ...(workingDir ? { workingDir } : {}) },
          outputs: { parameters: [{ name: 'r', valueFrom: { path } }] },
        },
      });
    try {
      await core.createNamespacedPod({ namespace: ns, body: script('cwd-default') });
      const wd = join(tmpdir(), `plugflow-wd-${ns}`);
      await core.createNamespacedPod({ namespace: ns, body: script('cwd-set', wd, join(wd, file)) });
      const byDefault = observePod(await finished('cwd-default'));
      expect(byDefault, byDefault.message).toMatchObject({
        phase: 'Succeeded',
        outputs: { result: '/', parameters: [{ name: 'r', value: 'written' }] },
      });
      const set = observePod(await finished('cwd-set'));
      expect(set, set.message).toMatchObject({
        phase: 'Succeeded',
        outputs: { result: wd, parameters: [{ name: 'r', value: 'written' }] },
      });
    } finally {
      rmSync(`/${file}`, { force: true });
    }
  });

  it('reports failing steps: the exit code, stdout, and a missing output file', async () => {
    const custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const wf = (await custom.createNamespacedCustomObject({
      group: 'plugflow.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'workflows',
      body: {
        apiVersion: 'plugflow.io/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'failing' },
        spec: { entrypoint: 'main', templates: [{ name: 'main', suspend: {} }] },
      },
    })) as Workflow;
    const step = (podName: string, command: string[], outputs = {}) =>
      buildStepPod({
        workflow: wf,
        nodeId: podName,
        podName,
        executorImage: 'plugflow:dev',
        template: { name: 't', container: { image: 'alpine', command }, outputs },
      });
    await core.createNamespacedPod({ namespace: ns, body: step('exits-2', ['sh', '-c', 'echo oops; exit 2']) });
    await core.createNamespacedPod({
      namespace: ns,
      body: step('no-file', ['true'], {
        parameters: [
          { name: 'p', valueFrom: { path: '/tmp/never-written' } },
          { name: 'q', valueFrom: { path: '/tmp/nope', default: 'dflt' } },
        ],
      }),
    });
    const exits = observePod(await finished('exits-2'));
    expect(exits).toMatchObject({ phase: 'Failed', message: 'Error (exit code 2)', outputs: { exitCode: '2', result: 'oops' } });
    const noFile = observePod(await finished('no-file'));
    expect(noFile.phase).toBe('Failed');
    expect(noFile.message).toMatch(
      /output parameter "p" \(valueFrom.path \/tmp\/never-written\): open \/tmp\/never-written: no such file or directory/,
    );
  });
});
