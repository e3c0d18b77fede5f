/**
 * Artifact driver plugins end to end: the real API server, the local pod runner running the real
 * init/emissary/wait programs and — as each step pod's sidecar — the test driver
 * (test/support/artifact-driver.js, a gRPC ArtifactService over @grpc/grpc-js) registered with
 * the controller the way an operator does (PLUGFLOW_ARTIFACT_DRIVERS, here the option). One step
 * writes outputs through the drivers (its own `plugin` location, and a repository whose store is a
 * driver), the next reads them back; artifact GC deletes them through the drivers too.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passing, sh } from './support/artifact-workflows.js';
import type { Workflow } from '../src/api/index.js';
import type { ArtifactDriver } from '../src/artifacts/drivers.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { CONFIGMAPS, PODS, WORKFLOWS } from '../src/kube/resource.js';
import { CLI_DIR } from '../src/runner/shim.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let controller: RunningController;
let bed: RunnerBed;
// Not under /tmp: the runner gives every container a /tmp of its own.
const store = mkdtempSync('/var/tmp/plugflow-driver-store-');
const { log } = captureLogger();
// The runner ignores images: the driver runs from the checkout, which every container sees at CLI_DIR.
const script = `${CLI_DIR}/test/support/artifact-driver.js`;
const drivers: ArtifactDriver[] = [
  { name: 'dirstore', image: 'example.com/dirstore-driver:1', command: ['node', script] },
  { name: 'oldstore', image: 'example.com/oldstore-driver:1', command: ['node', script, '--no-save-stream'], connectionTimeoutSeconds: 10 },
];
const conf = `dir: ${store}\n`;
const nodes = (wf: Workflow) => Object.values(wf.status?.nodes ?? {});
const node = (wf: Workflow, name: string) => nodes(wf).find((n) => n.displayName === name);
const calls = () => readFileSync(`${store}/calls.log`, 'utf8').trim().split('\n');

beforeAll(async () => {
  bed = await startRunnerBed('artifacts-plugin');
  ({ ns, client } = bed);
  // A repository whose store is a driver (the peer's `plugin` repository).
  await client.create(CONFIGMAPS, ns, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'artifact-repositories' },
    data: { drv: `plugin:\n  name: oldstore\n  configuration: "dir: ${store}"\n  keyFormat: "repo/{{workflow.name}}"\n` },
  });
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: ns,
    metricsPort: 0,
    workers: 2,
    log,
    artifactDrivers: drivers,
  });
}, 300_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
  rmSync(store, { recursive: true, force: true });
});

describe('artifact driver plugins', () => {
  it('a step writes outputs through the drivers and the next reads them back; GC deletes them through the drivers', async () => {
    const wf = passing(
      'through-drivers',
      ['hello-art', 'tree'],
      sh('gen', 'mkdir -p /tmp/tree/sub && echo B > /tmp/tree/sub/b && echo hello world | tee /tmp/hello_world.txt', {
        outputs: {
          artifacts: [
            { name: 'hello-art', path: '/tmp/hello_world.txt', plugin: { name: 'dirstore', configuration: conf, key: 'hi' } },
            { name: 'tree', path: '/tmp/tree', archive: { none: {} } }, // the repository: driver oldstore
          ],
        },
      }),
      sh('use', 'cat /tmp/message /tmp/in-tree/sub/b', {
        inputs: {
          artifacts: [
            { name: 'hello-art', path: '/tmp/message' },
            { name: 'tree', path: '/tmp/in-tree' },
          ],
        },
      }),
      { artifactGC: { strategy: 'OnWorkflowCompletion' } },
    );
    await client.create(WORKFLOWS, ns, wf);
    const done = await waitForCompletion(client, ns, 'through-drivers', 150_000);
    expect(done.status?.phase, JSON.stringify(nodes(done).map((n) => [n.displayName, n.phase, n.message]))).toBe('Succeeded');
    expect(node(done, 'use')?.outputs?.result).toBe('hello world\nB');
    const gen = node(done, 'gen')!;
    expect(gen.outputs?.artifacts?.find((a) => a.name === 'hello-art')?.plugin).toEqual({
      name: 'dirstore',
      configuration: conf,
      key: 'hi',
    });
    expect(gen.outputs?.artifacts?.find((a) => a.name === 'tree')?.plugin).toEqual({
      name: 'oldstore',
      configuration: `dir: ${store}`,
      key: 'repo/through-drivers/tree',
    });
    // A file streamed (SaveStream) to dirstore, a directory saved through the socket directory to oldstore.
    expect(calls()).toEqual(
      expect.arrayContaining(['SaveStream hi', 'Save repo/through-drivers/tree', 'Load hi', 'Load repo/through-drivers/tree']),
    );

    // The driver ran as a sidecar before init, with its socket directory only and no token.
    const pod = await client.get<V1Pod>(PODS, ns, gen.podName!);
    const driver = pod.spec!.initContainers!.find((c) => c.name === 'artifact-plugin-dirstore')!;
    expect(pod.spec!.initContainers!.map((c) => c.name)).toEqual(['artifact-plugin-dirstore', 'artifact-plugin-oldstore', 'init']);
    expect(driver.restartPolicy).toBe('Always');
    expect(driver.args).toEqual(['/tmp/artifact-plugins/dirstore/socket']);
    expect(driver.env).toBeUndefined();
    expect(driver.volumeMounts?.map((m) => m.mountPath)).toEqual([
      '/tmp/artifact-plugins/dirstore',
      '/var/run/secrets/kubernetes.io/serviceaccount',
    ]);
    expect(bed.runner.readLog(ns, gen.podName!, 'artifact-plugin-dirstore')).toContain(
      'artifact driver listening on /tmp/artifact-plugins/dirstore/socket',
    );
    expect(bed.runner.readLog(ns, gen.podName!, 'wait')).toMatch(
      /uploaded output artifact "hello-art" to artifact driver "dirstore" key hi \(SaveStream\)/,
    );

    // OnWorkflowCompletion: the GC pod runs both drivers and asks them to delete.
    await eventually(
      async () => {
        const w = await client.get<Workflow>(WORKFLOWS, ns, 'through-drivers');
        const processed = (w.status as { artifactGCStatus?: { strategiesProcessed?: Record<string, boolean> } }).artifactGCStatus;
        if (!processed?.strategiesProcessed?.OnWorkflowCompletion)
          throw new Error(`not collected yet: ${JSON.stringify(w.status?.conditions)}`);
        return true;
      },
      'artifact GC through the drivers',
      90_000,
    );
    expect(calls()).toEqual(expect.arrayContaining(['Delete hi', 'Delete repo/through-drivers/tree']));
    expect(existsSync(`${store}/data/hi`)).toBe(false);
    expect(existsSync(`${store}/data/repo/through-drivers/tree`)).toBe(false);
  }, 240_000);

  it('a workflow naming a driver the controller does not run fails at once, naming the field', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('unknown-driver', {
        entrypoint: 'main',
        templates: [
          sh('main', 'true', {
            outputs: { artifacts: [{ name: 'o', path: '/o', plugin: { name: 'nosuch', configuration: conf, key: 'k' } }] },
          }),
        ],
      }),
    );
    const wf = await waitForCompletion(client, ns, 'unknown-driver', 60_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(wf.status?.message).toContain(
      'spec.templates[main].outputs.artifacts[o].plugin.name names artifact driver "nosuch", which the controller does not run (it has "dirstore", "oldstore"',
    );
  }, 90_000);
});
