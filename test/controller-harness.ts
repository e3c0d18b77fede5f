/**
 * Helpers shared by the controller suites (test/controller*.test.ts, test/e2e-*.test.ts):
 * a log capture, polling, and small workflow builders. No fakes: everything talks to the real
 * API server of the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CoreV1Api } from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import type { Workflow, WorkflowPhase } from '../src/api/index.js';
import { KubeClient as KubeClientImpl, type KubeClient } from '../src/kube/client.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { createLogger, type Logger } from '../src/log/logger.js';
import { PodRunner } from '../src/runner/runner.js';
import { adminKubeConfig, createTestNamespace, deleteTestNamespace } from './support/cluster.js';

export interface LogLine {
  level: string;
  message: string;
  [k: string]: unknown;
}

/** A JSON logger like createLogger's whose lines are kept for assertions (and echoed on PLUGFLOW_TEST_LOGS=1). */
export function captureLogger(component = 'controller'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString().split('\n')) {
        if (!text.trim()) continue;
        lines.push(JSON.parse(text) as LogLine);
        if (process.env.PLUGFLOW_TEST_LOGS) process.stderr.write(`${text}\n`);
      }
      cb();
    },
  });
  const log = winston.createLogger({
    level: process.env.PLUGFLOW_TEST_LOG_LEVEL ?? 'info',
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
  return { log, lines };
}

export async function eventually<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for: ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function workflow(name: string, spec: Workflow['spec'], labels?: Record<string, string>): Workflow {
  return { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name, ...(labels ? { labels } : {}) }, spec };
}

/** A one-step workflow whose step runs `sh -c script` and prints to stdout. */
export function oneStep(name: string, script = 'echo hello'): Workflow {
  return workflow(name, {
    entrypoint: 'main',
    templates: [{ name: 'main', container: { image: 'alpine:3', command: ['sh', '-c', script] } }],
  });
}

export const FINAL: readonly WorkflowPhase[] = ['Succeeded', 'Failed', 'Error'];

/** Waits until the workflow reaches a final phase and returns it. */
export async function waitForCompletion(client: KubeClient, namespace: string, name: string, timeoutMs = 90_000): Promise<Workflow> {
  return eventually(
    async () => {
      const wf = await client.get<Workflow>(WORKFLOWS, namespace, name);
      return wf.status?.phase && FINAL.includes(wf.status.phase) ? wf : undefined;
    },
    `workflow ${namespace}/${name} to complete`,
    timeoutMs,
    200,
  );
}

/** A fresh namespace with the local pod runner as its kubelet, for a suite that starts its own controller. */
export interface RunnerBed {
  ns: string;
  client: KubeClient;
  runner: PodRunner;
  /** Stops the runner, removes its Node and the namespace; run after the controller stopped. */
  stop(): Promise<void>;
}

export async function startRunnerBed(prefix: string): Promise<RunnerBed> {
  const ns = await createTestNamespace(prefix);
  const client = await KubeClientImpl.fromKubeConfig(adminKubeConfig());
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  await eventually(() => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }), 'the default service account');
  const runner = new PodRunner({
    kubeConfig: adminKubeConfig(),
    dir: mkdtempSync(join(tmpdir(), `plugflow-${prefix}-runner-`)),
    nodeName: `runner-${ns}`,
    namespace: ns,
    log: createLogger('runner', 'warn'),
  });
  await runner.start();
  return {
    ns,
    client,
    runner,
    stop: async () => {
      await runner.stop(1);
      await core.deleteNode({ name: `runner-${ns}` }).catch(() => {});
      await client.close();
      await deleteTestNamespace(ns);
    },
  };
}

/**
 * A controller as a process of its own (`plugflow controller`), so that a test can really kill
 * it (SIGKILL). `stderr()` is what it logged (warnings and errors), for failure messages.
 */
export function spawnControllerProcess(
  kubeconfigPath: string,
  namespace: string,
  extra: { args?: string[]; env?: Record<string, string> } = {},
): { child: ChildProcess; stderr: () => string } {
  const repo = resolve(import.meta.dirname, '..');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repo, 'src/cli/main.ts'),
      'controller',
      '--kubeconfig',
      kubeconfigPath,
      '--namespace',
      namespace,
      '--metrics-port',
      '0',
      '--no-events',
      ...(extra.args ?? []),
    ],
    { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PLUGFLOW_LOG_LEVEL: 'warn', ...extra.env } },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return { child, stderr: () => err };
}
