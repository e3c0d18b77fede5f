/**
 * Native sidecars on the local pod runner (an init container with restartPolicy Always, as the
 * artifact drivers of step pods run): started before the next init container, running beside the
 * containers, stopped once they have ended without deciding the pod's phase — and an empty
 * directory over the service-account token's path keeps the token from it.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodRunner } from '../src/runner/runner.js';
import { eventually, startRunnerBed, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let bed: RunnerBed;
let ns: string;
let core: CoreV1Api;
let runner: PodRunner;
const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

beforeAll(async () => {
  bed = await startRunnerBed('runner-side');
  ({ ns, runner } = bed);
  core = adminKubeConfig().makeApiClient(CoreV1Api);
}, 180_000);

afterAll(async () => {
  await bed?.stop();
});

describe('native sidecars on the local pod runner', () => {
  it('runs the sidecar beside the next init container and the containers, then stops it; the pod Succeeds', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'with-sidecar' },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 5,
          volumes: [
            { name: 'work', emptyDir: {} },
            { name: 'no-token', emptyDir: {} },
          ],
          initContainers: [
            {
              name: 'side',
              image: 'x',
              restartPolicy: 'Always',
              command: [
                'sh',
                '-c',
                `if [ -e ${TOKEN_DIR}/token ]; then echo token > /work/side-token; else echo none > /work/side-token; fi; ` +
                  'echo up > /work/side-up; trap "echo got TERM; exit 0" TERM; while true; do sleep 0.2; done',
              ],
              volumeMounts: [
                { name: 'work', mountPath: '/work' },
                { name: 'no-token', mountPath: TOKEN_DIR, readOnly: true },
              ],
            },
            {
              name: 'setup',
              image: 'x',
              // The sidecar runs while the next init container does.
              command: [
                'sh',
                '-c',
                'for i in $(seq 50); do [ -e /work/side-up ] && { echo saw-sidecar; exit 0; }; sleep 0.1; done; exit 1',
              ],
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            },
          ],
          containers: [
            {
              name: 'main',
              image: 'x',
              command: ['sh', '-c', `cat /work/side-token; test -s ${TOKEN_DIR}/token && echo main-has-token; exit 0`],
              volumeMounts: [{ name: 'work', mountPath: '/work' }],
            },
          ],
        },
      },
    });
    const pod = await eventually(
      async () => {
        const p = await core.readNamespacedPod({ name: 'with-sidecar', namespace: ns });
        return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
      },
      'the pod to finish',
      90_000,
    );
    const status = (p: V1Pod, name: string) => p.status?.initContainerStatuses?.find((s) => s.name === name)?.state;
    expect(pod.status?.phase, JSON.stringify(pod.status)).toBe('Succeeded');
    expect(runner.readLog(ns, 'with-sidecar', 'setup')).toBe('saw-sidecar\n');
    // The token went to main (the pod mounts one) but not to the sidecar, which covers its path.
    expect(runner.readLog(ns, 'with-sidecar', 'main')).toBe('none\nmain-has-token\n');
    // Stopped after main, with SIGTERM: its exit does not fail the pod.
    expect(status(pod, 'side')?.terminated).toBeDefined();
    expect(runner.readLog(ns, 'with-sidecar', 'side')).toContain('got TERM');
    expect(pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
  }, 120_000);
});
