/**
 * The end-to-end suites' system: the same parts as src/devenv/dev-stack.ts (CRDs and RBAC from
 * manifests/, the local pod runner, the controller and the server, each component with its own
 * service account's token), started against the run's shared control plane but confined to the
 * suite's own namespace, so several suites (and the controller and runner suites) can run at
 * once on one API server without fighting over pods or workflows:
 *
 * - the runner binds and runs pods of the suite's namespace only, on a node of its own;
 * - the controller reconciles workflows of that namespace only, and its installation namespace
 *   (plugins shared by every workflow namespace) is a test namespace too, not `plugflow`.
 *
 * startDevStack has no options for either (it serves the whole cluster), hence this assembly of
 * the same parts.
 *
 * The local runner gives pods no network namespace: every agent pod's health server listens on
 * 127.0.0.1:9766 and plugin sidecars on their containerPorts. Suites that run plugin workflows
 * take `agentSlot()` (a lock shared by the e2e files on this machine) around each such workflow,
 * so two agent pods never run at once.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig, Watch, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import {
  DEFAULT_INSTALL_NAMESPACE,
  FINAL_WORKFLOW_PHASES,
  GROUP,
  PLURAL,
  VERSION,
  type ExecutorPlugin,
  type NodeStatus,
  type Workflow,
  type WorkflowPhase,
} from '../../src/api/index.js';
import { applyObjects } from '../../src/kube/apply.js';
import { renderTree } from '../../src/cli/tree.js';
import { RestClient } from '../../src/cli/rest-client.js';
import { restBackend, type WorkflowBackend } from '../../src/cli/workflow-backend.js';
import { startController, type RunningController } from '../../src/controller/controller.js';
import { installBase, serviceAccountKubeConfig } from '../../src/devenv/dev-stack.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { DEFAULT_AGENT_HEALTH_PORT } from '../../src/plugins/index.js';
import { PodRunner } from '../../src/runner/runner.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { startPostgres, type Postgres } from '../../src/devenv/postgres.js';
import { startNatsCluster, type NatsCluster } from '../../src/devenv/nats-cluster.js';
import { envelopeKey } from '../../src/server/event-envelope.js';
import { randomBytes } from 'node:crypto';
import { adminKubeConfig, cluster, createTestNamespace, deleteTestNamespace } from './cluster.js';

export interface LogLine {
  level: string;
  message: string;
  [k: string]: unknown;
}

/** A winston JSON logger whose lines are kept for assertions (echoed with PLUGFLOW_TEST_LOGS=1). */
export function capturingLogger(component: string, level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const text of chunk.toString().split('\n')) {
        if (!text.trim()) continue;
        try {
          lines.push(JSON.parse(text) as LogLine);
        } catch {
          lines.push({ level: 'unparsed', message: text });
        }
        if (process.env.PLUGFLOW_TEST_LOGS) process.stderr.write(`${text}\n`);
      }
      cb();
    },
  });
  const log = winston.createLogger({
    level,
    defaultMeta: { component },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
  return { log, lines };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns something other than undefined/false; on timeout throws with
 * `what`, the last error and whatever `describe` reports (e.g. the workflow tree).
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; everyMs?: number; describe?: () => Promise<string> | string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      let detail = '';
      if (opts.describe) detail = await Promise.resolve(opts.describe()).catch((err: unknown) => `(no detail: ${String(err)})`);
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${(last as Error).message ?? String(last)})` : ''}${detail ? `\n${detail}` : ''}`,
      );
    }
    await sleep(opts.everyMs ?? 250);
  }
}

/** `promise`, or a clear error once `ms` have passed without it settling. */
export async function within<T>(promise: Promise<T>, ms: number, what: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${ms / 1000}s waiting for ${typeof what === 'string' ? what : what()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface E2eStackOptions {
  /** Prefix of the suite's namespace. */
  prefix: string;
  /** Executor plugins on (default true). */
  plugins?: boolean;
  /** Workflow-level executor plugins (spec.executorPlugins) on (default false, as in the controller). */
  workflowLevelPlugins?: boolean;
  /** Installation namespace of the controller; a fresh test namespace `<prefix>-install` by default. */
  installNamespace?: string;
  /** Start the local pod runner (default true). */
  runner?: boolean;
  /** Start the REST server (default true). */
  server?: boolean;
  /** Start a PostgreSQL and turn the workflow archive on (default false). */
  archive?: boolean;
  /** Start the event bus of `plugflow dev --event-bus` (a three-node NATS JetStream cluster) and give it to the server (default false). */
  eventBus?: boolean;
}

export interface E2eStack {
  namespace: string;
  installNamespace: string;
  kubeconfigPath: string;
  admin: KubeConfig;
  core: CoreV1Api;
  objects: CustomObjectsApi;
  runner?: PodRunner;
  controller: RunningController;
  /** Everything the controller logged. */
  controllerLog: LogLine[];
  server?: RunningServer;
  /** The event bus, with `eventBus`. */
  nats?: NatsCluster;
  /** `plugflow submit/get` through the REST server (client auth with the admin token). */
  backend?: WorkflowBackend;
  /** Submits a workflow through the REST server (the API server directly without one); returns its name. */
  submit(wf: Workflow): Promise<string>;
  getWorkflow(name: string): Promise<Workflow>;
  /** Waits for a final phase; on timeout the error shows the workflow tree and the pods. */
  waitForCompletion(name: string, timeoutMs?: number): Promise<Workflow>;
  /** The workflow tree and the namespace's pods, for failure messages. */
  describe(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Creates a service account token, retrying while a fresh account is not yet known to the API server. */
async function saKubeConfig(admin: KubeConfig, namespace: string, name: string): Promise<KubeConfig> {
  return waitFor(`a token of service account ${namespace}/${name}`, () => serviceAccountKubeConfig(admin, namespace, name, 3600), {
    timeoutMs: 60_000,
    everyMs: 300,
  });
}

export async function startE2eStack(opts: E2eStackOptions): Promise<E2eStack> {
  const admin = adminKubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const objects = admin.makeApiClient(CustomObjectsApi);
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => console.warn(`[e2e] stop: ${String(err)}`));
  };
  try {
    const namespace = await createTestNamespace(opts.prefix);
    const owned = [namespace];
    let installNamespace = opts.installNamespace;
    if (!installNamespace) {
      installNamespace = await createTestNamespace(`${opts.prefix}-install`);
      owned.push(installNamespace);
    }
    // Runs after the controller stopped and before the runner stops: the runner finishes the
    // deletion of the namespace's pods as a kubelet would, so nothing is left Terminating.
    const deleteNamespaces = async () => {
      await Promise.all(owned.map((ns) => deleteTestNamespace(ns)));
      await waitFor(`the pods of ${namespace} to be gone`, async () => (await core.listNamespacedPod({ namespace })).items.length === 0, {
        timeoutMs: 30_000,
      }).catch((err: unknown) => console.warn(`[e2e] ${String(err)}`));
    };
    stops.push(deleteNamespaces);
    // Namespace `plugflow` with the component accounts, CRDs, ClusterRoles, and the agent's
    // RoleBinding in the workflow namespace: what an installation has besides its Deployments.
    await installBase(admin, [namespace]);
    await waitFor(`service account ${namespace}/default`, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));

    let runner: PodRunner | undefined;
    if (opts.runner ?? true) {
      const nodeName = `e2e-${namespace}`;
      runner = new PodRunner({
        kubeConfig: admin,
        dir: mkdtempSync(join(tmpdir(), `plugflow-${opts.prefix}-`)),
        nodeName,
        namespace,
        log: createLogger('runner', process.env.PLUGFLOW_TEST_LOG_LEVEL ?? 'warn'),
      });
      const r = runner;
      // Before the namespaces' deletion in the list, so it runs after it.
      stops.splice(stops.indexOf(deleteNamespaces), 0, async () => {
        await r.stop(1);
        await core.deleteNode({ name: nodeName }).catch(() => {});
        if (!process.env.PLUGFLOW_TEST_KEEP_RUNNER_DIR) rmSync(r.dir, { recursive: true, force: true });
      });
      await runner.start();
      if (!runner.namespacesEnabled)
        throw new Error('the local pod runner has no mount namespaces here (needs root and unshare): step pods cannot run');
    }

    let postgres: Postgres | undefined;
    if (opts.archive) {
      postgres = await startPostgres({ log: (l) => console.log(l) });
      const p = postgres;
      stops.push(() => p.stop());
    }
    const { log, lines } = capturingLogger('controller');
    const controller = await startController({
      ...(postgres ? { archiveUrl: postgres.url } : {}),
      kubeConfig: await saKubeConfig(admin, DEFAULT_INSTALL_NAMESPACE, 'plugflow-controller'),
      namespace,
      installNamespace,
      pluginsEnabled: opts.plugins ?? true,
      workflowLevelPluginsEnabled: opts.workflowLevelPlugins ?? false,
      workers: 4,
      processMetrics: false,
      log,
    });
    stops.push(() => controller.stop());

    let nats: NatsCluster | undefined;
    if (opts.eventBus) {
      nats = await startNatsCluster({ log: (l) => console.log(l) });
      const n = nats;
      stops.push(() => n.stop());
    }
    let server: RunningServer | undefined;
    let backend: WorkflowBackend | undefined;
    if (opts.server ?? true) {
      server = await startServer({
        kubeConfig: await saKubeConfig(admin, DEFAULT_INSTALL_NAMESPACE, 'plugflow-server'),
        port: 0,
        host: '127.0.0.1',
        secure: true,
        authMode: 'client',
        processMetrics: false,
        ...(postgres ? { archiveUrl: postgres.url } : {}),
        ...(nats ? { eventBus: { ...nats.connection, key: envelopeKey(randomBytes(32)) } } : {}),
        logger: createLogger('server', process.env.PLUGFLOW_TEST_LOG_LEVEL ?? 'warn'),
      });
      const s = server;
      stops.push(() => s.close());
      backend = restBackend(server.url, new RestClient({ server: server.url, token: cluster().adminToken, insecureSkipTlsVerify: true }));
      const b = backend;
      stops.push(() => b.close());
    }

    const base = { group: GROUP, version: VERSION, namespace, plural: PLURAL.workflow };
    const getWorkflow = async (name: string) => (await objects.getNamespacedCustomObject({ ...base, name })) as Workflow;
    const describe = async (name: string): Promise<string> => {
      const parts: string[] = [];
      try {
        const wf = await getWorkflow(name);
        parts.push(
          `workflow ${namespace}/${name}: phase ${wf.status?.phase || '(none)'}${wf.status?.message ? ` — ${wf.status.message}` : ''}`,
          renderTree(wf),
        );
      } catch (err) {
        parts.push(`workflow ${namespace}/${name}: ${String(err)}`);
      }
      try {
        const pods = await core.listNamespacedPod({ namespace });
        parts.push('pods:', ...pods.items.map(podLine));
        for (const p of pods.items) parts.push(...failedLogs(p, runner));
      } catch (err) {
        parts.push(`pods: ${String(err)}`);
      }
      const warnings = lines.filter((l) => l.level === 'warn' || l.level === 'error').slice(-10);
      if (warnings.length) parts.push('last controller warnings:', ...warnings.map((l) => `  ${JSON.stringify(l)}`));
      return parts.join('\n');
    };
    const submit = async (wf: Workflow): Promise<string> => {
      const created = backend
        ? await backend.create(namespace, wf, false)
        : ((await objects.createNamespacedCustomObject({ ...base, body: { ...wf, metadata: { ...wf.metadata, namespace } } })) as Workflow);
      return created.metadata.name!;
    };
    const waitForCompletion = (name: string, timeoutMs = 90_000) =>
      waitFor(
        `workflow ${namespace}/${name} to reach a final phase`,
        async () => {
          const wf = await getWorkflow(name);
          return wf.status?.phase && FINAL_WORKFLOW_PHASES.includes(wf.status.phase) ? wf : undefined;
        },
        { timeoutMs, everyMs: 300, describe: () => describe(name) },
      );

    return {
      namespace,
      installNamespace,
      kubeconfigPath: cluster().kubeconfigPath,
      admin,
      core,
      objects,
      runner,
      controller,
      controllerLog: lines,
      server,
      nats,
      backend,
      submit,
      getWorkflow,
      waitForCompletion,
      describe,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function podLine(p: V1Pod): string {
  const statuses = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].map((s) => {
    const st = s.state?.terminated
      ? `terminated(${s.state.terminated.exitCode}${s.state.terminated.reason ? ` ${s.state.terminated.reason}` : ''})`
      : s.state?.running
        ? 'running'
        : `waiting(${s.state?.waiting?.reason ?? ''})`;
    return `${s.name}=${st}`;
  });
  return `  ${p.metadata?.name} ${p.status?.phase ?? ''} ${statuses.join(' ')}`;
}

/** The last lines of the logs of a pod's containers that failed or are waiting to restart. */
function failedLogs(p: V1Pod, runner: PodRunner | undefined): string[] {
  if (!runner) return [];
  const out: string[] = [];
  for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
    const failed = (s.state?.terminated && s.state.terminated.exitCode !== 0) || s.state?.waiting?.reason === 'CrashLoopBackOff';
    if (!failed) continue;
    let text: string[];
    try {
      text = runner.readLog(p.metadata!.namespace!, p.metadata!.name!, s.name, { tailBytes: 4096 }).trimEnd().split('\n').slice(-8);
    } catch (err) {
      text = [String(err)];
    }
    out.push(`  log of ${p.metadata!.name}/${s.name} (last lines):`, ...text.map((l) => `    ${l}`));
  }
  return out;
}

export interface WorkflowRecorder {
  /** Every version of the named workflow seen so far, in order. */
  versions(name: string): Workflow[];
  stop(): void;
}

/**
 * Records every version of every Workflow of a namespace through a watch (polling could miss a
 * short-lived state); start it before submitting. Resolves once the watch is established.
 */
export async function recordWorkflows(admin: KubeConfig, namespace: string): Promise<WorkflowRecorder> {
  const seen = new Map<string, Workflow[]>();
  const list = (await admin
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PLURAL.workflow })) as {
    metadata: { resourceVersion: string };
  };
  let failure: unknown;
  let stopped = false;
  const controller = await new Watch(admin).watch(
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL.workflow}`,
    { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: false },
    (type, obj: Workflow) => {
      if (type !== 'ADDED' && type !== 'MODIFIED') return;
      const name = obj.metadata.name!;
      seen.set(name, [...(seen.get(name) ?? []), obj]);
    },
    (err: unknown) => {
      if (!stopped) failure = err ?? new Error('the API server ended the watch');
    },
  );
  return {
    versions: (name) => {
      if (failure) throw new Error(`the workflow watch of ${namespace} failed: ${String(failure)}`);
      return seen.get(name) ?? [];
    },
    stop: () => {
      stopped = true;
      controller.abort();
    },
  };
}

/** The nodes of a workflow whose display name is `displayName`. */
export function nodesNamed(wf: Workflow, displayName: string): NodeStatus[] {
  return Object.values(wf.status?.nodes ?? {}).filter((n) => n.displayName === displayName);
}

/** The one node with this display name (throws, with the tree, when there is not exactly one). */
export function nodeNamed(wf: Workflow, displayName: string): NodeStatus {
  const found = nodesNamed(wf, displayName);
  if (found.length !== 1) throw new Error(`expected one node "${displayName}", found ${found.length}\n${renderTree(wf)}`);
  return found[0]!;
}

/** The children of a node, in order. */
export function childrenOf(wf: Workflow, node: NodeStatus): NodeStatus[] {
  return (node.children ?? []).map((id) => {
    const child = wf.status?.nodes?.[id];
    if (!child) throw new Error(`node ${node.name} lists child ${id}, which is not in status.nodes\n${renderTree(wf)}`);
    return child;
  });
}

/** The workflow's root node (id = workflow name). */
export function rootNode(wf: Workflow): NodeStatus {
  const root = wf.status?.nodes?.[wf.metadata.name!];
  if (!root) throw new Error(`workflow ${wf.metadata.name} has no root node\n${renderTree(wf)}`);
  return root;
}

/** Counts of node types, e.g. `{Pod: 3, Steps: 1, StepGroup: 2}`. */
export function typeCounts(wf: Workflow): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of Object.values(wf.status?.nodes ?? {})) out[n.type] = (out[n.type] ?? 0) + 1;
  return out;
}

export const outputParameter = (node: NodeStatus, name: string): string | undefined =>
  node.outputs?.parameters?.find((p) => p.name === name)?.value as string | undefined;

export function expectPhase(wf: Workflow, phase: WorkflowPhase): void {
  if (wf.status?.phase !== phase)
    throw new Error(
      `workflow ${wf.metadata.name} ended ${wf.status?.phase} (${wf.status?.message ?? 'no message'}), expected ${phase}\n${renderTree(wf)}`,
    );
}

// ---------------------------------------------------------------------------------------------
// Agent pods on the local runner share the host's loopback: one at a time on this machine.

const LOCK_PATH = join(tmpdir(), 'plugflow-e2e-agent-slot.lock');

function lockHolder(): number | undefined {
  try {
    const pid = Number(readFileSync(LOCK_PATH, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether nothing listens on 127.0.0.1:port (binding succeeds). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Takes the machine-wide agent slot (a lock file shared by the e2e files) and waits until the
 * agent's health port and the given plugin ports are free (the previous agent pod's processes
 * have stopped). Returns the release function.
 */
export async function agentSlot(pluginPorts: number[], timeoutMs = 120_000): Promise<() => void> {
  const id = `${process.pid}`;
  await waitFor(
    `the e2e agent slot (${LOCK_PATH})`,
    () => {
      try {
        const fd = openSync(LOCK_PATH, 'wx');
        writeSync(fd, id);
        closeSync(fd);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = lockHolder();
        // A holder that died (or a file left half-written) does not block forever.
        if (holder === undefined ? Date.now() - safeMtime(LOCK_PATH) > 5_000 : !alive(holder)) rmSync(LOCK_PATH, { force: true });
        return false;
      }
    },
    { timeoutMs, everyMs: 200, describe: () => `held by pid ${lockHolder() ?? '?'}` },
  );
  const release = () => {
    if (lockHolder() === process.pid) {
      try {
        unlinkSync(LOCK_PATH);
      } catch {
        /* already gone */
      }
    }
  };
  try {
    const ports = [DEFAULT_AGENT_HEALTH_PORT, ...pluginPorts];
    await waitFor(
      `ports ${ports.join(', ')} on 127.0.0.1 to be free (an earlier agent pod's processes still running?)`,
      async () => (await Promise.all(ports.map(portFree))).every(Boolean),
      { timeoutMs: 60_000, everyMs: 250 },
    );
  } catch (err) {
    release();
    throw err;
  }
  return release;
}

function safeMtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Small Python plugins for the suites (standard library only; the runner runs `python3 -c`).

const PYTHON_PLUGIN = `
import json, os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
NAME = os.environ["PLUGIN_NAME"]
PORT = int(os.environ["PLUGIN_PORT"])
TOKEN_PATH = "/var/run/workflow/token"

def read_token():
    try:
        with open(TOKEN_PATH, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""

%EXECUTE%

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0] != "/api/v1/template.execute":
            return self.reply(404, None)
        token = read_token()
        if not token or self.headers.get("Authorization", "") != "Bearer " + token:
            return self.reply(403, None)
        args = json.loads(body)
        section = args["template"].get("plugin") or {}
        if NAME not in section:
            return self.reply(200, {})
        return self.reply(200, execute(section[NAME], args))
    def reply(self, status, body):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, fmt, *args):
        print(NAME + ": " + fmt % args, flush=True)

ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
`;

export interface PythonPluginOptions {
  name: string;
  port: number;
  runAsUser?: number;
  /** Python source defining `def execute(config, args)` that returns the reply (`{"node": …}`). */
  execute: string;
  env?: Record<string, string>;
  namespace?: string;
}

/** An ExecutorPlugin whose sidecar runs a small Python server (`python3 -c`). */
export function pythonPlugin(o: PythonPluginOptions): ExecutorPlugin {
  return {
    apiVersion: 'plugflow.io/v1alpha1',
    kind: 'ExecutorPlugin',
    metadata: { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) },
    spec: {
      sidecar: {
        container: {
          name: o.name,
          image: 'python:3.12-alpine',
          command: ['python3', '-c'],
          args: [PYTHON_PLUGIN.replace('%EXECUTE%', o.execute)],
          ports: [{ containerPort: o.port }],
          env: Object.entries({ PLUGIN_NAME: o.name, PLUGIN_PORT: String(o.port), ...o.env }).map(([name, value]) => ({ name, value })),
          resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
          securityContext: { runAsNonRoot: true, runAsUser: o.runAsUser ?? 65534 },
        },
      },
    },
  } as ExecutorPlugin;
}

/** Applies ConfigMaps (server-side apply, as `kubectl apply`) into a namespace. */
export async function applyInto(admin: KubeConfig, namespace: string, objects: KubernetesObject[]): Promise<void> {
  await applyObjects(
    admin,
    objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace } })),
  );
}

/** Waits for the controller's `Executor plugin <event>` line for namespace/name. */
export function waitForPluginLog(
  stack: Pick<E2eStack, 'controllerLog'>,
  event: 'added' | 'updated' | 'removed',
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<LogLine> {
  return waitFor(
    `the controller to log "Executor plugin ${event}" for ${namespace}/${name}`,
    () => stack.controllerLog.find((l) => l.message === `Executor plugin ${event}` && l.namespace === namespace && l.name === name),
    {
      timeoutMs,
      everyMs: 100,
      describe: () =>
        stack.controllerLog
          .filter((l) => String(l.message).startsWith('Executor plugin'))
          .map((l) => JSON.stringify(l))
          .join('\n'),
    },
  );
}
