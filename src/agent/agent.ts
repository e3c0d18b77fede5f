/**
 * The agent: the main container of a workflow's agent pod. It watches the workflow's
 * WorkflowTaskSet, runs every task of `spec.tasks` (plugin or http) with a bounded number of
 * calls in flight, and merge-patches results into `status.nodes`. It stops when the controller
 * marks the TaskSet completed (label, see src/api/taskset.ts) or the TaskSet is deleted.
 *
 * Restart safety: a task whose status already holds a final phase is not run again; one with an
 * interim phase (a requeue in progress when the agent died) is run again from the start.
 */
import { FINAL_NODE_PHASES, isTaskSetCompleted, type NodeResult, type WorkflowTaskSet } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';

import { Informer } from '../kube/informer.js';
import { WORKFLOW_TASK_SETS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { AgentMetrics } from './agent-metrics.js';
import type { RetryPolicy } from './call-machine.js';
import { HttpExecutor, type EvaluateCondition, type ReadSecret } from './http-template.js';
import { PluginClient, type PluginTarget } from './plugin-client.js';
import { boundResult } from './reply-validation.js';
import { StatusBatcher, type PatchStatus } from './status-batcher.js';
import { runTask, type WorkflowRef } from './task-runner.js';
import { WorkerPool } from './worker-pool.js';
import { errorMessage } from '../log/error-message.js';

export interface AgentOptions {
  kube: KubeClient;
  workflow: WorkflowRef;
  /** Plugins with their tokens already read. */
  plugins: readonly PluginTarget[];
  log: Logger;
  evaluate: EvaluateCondition;
  /** Reads a Secret key for http headers; default: through `kube`. */
  readSecret?: ReadSecret;
  /** Calls in flight at once; default 16. */
  concurrency?: number;
  retry?: RetryPolicy;
  pluginTimeoutMs?: number;
  patchDelayMs?: number;
  metrics?: AgentMetrics;
}

export type AgentStopReason = 'completed' | 'deleted' | 'stopped';

const SECRETS = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true } as const;

export class Agent {
  readonly metrics: AgentMetrics;
  private readonly informer: Informer<WorkflowTaskSet & { metadata: { name?: string } }>;
  private readonly client: PluginClient;
  private readonly http: HttpExecutor;
  private readonly pool: WorkerPool;
  private readonly batcher: StatusBatcher;
  private readonly pluginNames: string[];
  private readonly notImplemented = new Set<string>();
  private readonly running = new Map<string, AbortController>();
  private readonly finished = new Set<string>();
  private readonly stopped: Promise<AgentStopReason>;
  private resolveStopped!: (r: AgentStopReason) => void;
  private stopping = false;

  constructor(private readonly opts: AgentOptions) {
    this.metrics = opts.metrics ?? new AgentMetrics();
    const wf = opts.workflow;
    this.pluginNames = opts.plugins.map((p) => p.name).sort();
    this.client = new PluginClient(opts.plugins, { timeoutMs: opts.pluginTimeoutMs });
    this.pool = new WorkerPool(opts.concurrency ?? 16);
    const readSecret: ReadSecret =
      opts.readSecret ??
      (async (namespace, name, key) => {
        const secret = await opts.kube.get<{ data?: Record<string, string> }>(SECRETS, namespace, name);
        const value = secret.data?.[key];
        if (value === undefined) throw new Error(`the secret has no key ${key}`);
        return Buffer.from(value, 'base64').toString('utf8');
      });
    this.http = new HttpExecutor({ namespace: wf.namespace, readSecret, evaluate: opts.evaluate });
    const patch: PatchStatus = async (body) => {
      await opts.kube.mergePatch(WORKFLOW_TASK_SETS, wf.namespace, wf.name, body, 'status');
    };
    this.batcher = new StatusBatcher(patch, {
      delayMs: opts.patchDelayMs,
      onError: (err, nodes) => {
        this.metrics.statusPatches.inc({ result: 'error' });
        opts.log.warn('writing task results failed; will retry', { nodes, error: errorMessage(err) });
      },
    });
    this.informer = new Informer({
      client: opts.kube,
      type: WORKFLOW_TASK_SETS,
      namespace: wf.namespace,
      fieldSelector: `metadata.name=${wf.name}`,
      resyncMs: 60_000,
      log: opts.log,
    });
    this.informer.addHandlers({
      onAdd: (ts) => this.reconcile(ts),
      onUpdate: (_old, ts) => this.reconcile(ts),
      onDelete: () => void this.stop('deleted'),
    });
    this.stopped = new Promise((resolve) => (this.resolveStopped = resolve));
  }

  /** Starts watching; resolves with why the agent stopped. */
  run(): Promise<AgentStopReason> {
    const { workflow, plugins, log } = this.opts;
    // Names and addresses only: tokens are never logged.
    log.info('agent starting', {
      workflow: `${workflow.namespace}/${workflow.name}`,
      plugins: plugins.map((p) => `${p.name}=${p.address}`),
    });
    this.informer.start();
    return this.stopped;
  }

  ready(): boolean {
    return this.informer.hasSynced();
  }

  /** Stops calling, writes what is pending (unless the TaskSet is gone) and releases everything. */
  async stop(reason: AgentStopReason = 'stopped'): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.opts.log.info('agent stopping', { reason });
    for (const c of this.running.values()) c.abort();
    await this.informer.stop();
    if (reason !== 'deleted') await this.batcher.flush();
    this.batcher.stop();
    await Promise.all([this.client.close(), this.http.close()]);
    this.resolveStopped(reason);
  }

  private reconcile(ts: WorkflowTaskSet): void {
    if (this.stopping) return;
    if (isTaskSetCompleted(ts)) {
      void this.stop('completed');
      return;
    }
    const tasks = ts.spec?.tasks ?? {};
    const status = ts.status?.nodes ?? {};
    for (const [nodeId, template] of Object.entries(tasks)) {
      if (this.running.has(nodeId) || this.finished.has(nodeId)) continue;
      const phase = status[nodeId]?.phase;
      if (phase && FINAL_NODE_PHASES.includes(phase)) {
        this.finished.add(nodeId);
        continue;
      }
      this.start(nodeId, template);
    }
    // The controller removes entries it has copied (or no longer wants): forget or cancel them.
    for (const nodeId of this.finished) if (!(nodeId in tasks)) this.finished.delete(nodeId);
    for (const [nodeId, c] of this.running) {
      if (!(nodeId in tasks)) {
        c.abort();
        this.running.delete(nodeId);
        this.batcher.forget(nodeId);
        this.opts.log.info('task removed from the TaskSet; stopped running it', { nodeId });
      }
    }
    this.metrics.tasksRunning.set(this.running.size);
  }

  private start(nodeId: string, template: WorkflowTaskSet['spec']['tasks'] extends Record<string, infer T> | undefined ? T : never): void {
    const abort = new AbortController();
    this.running.set(nodeId, abort);
    const report = (id: string, result: NodeResult): void => {
      if (abort.signal.aborted) return;
      this.batcher.set(id, result);
      if (result.phase && FINAL_NODE_PHASES.includes(result.phase)) this.metrics.tasksFinished.inc({ phase: result.phase });
    };
    runTask(
      nodeId,
      template,
      {
        workflow: this.opts.workflow,
        plugins: this.pluginNames,
        callPlugin: (plugin, body) => this.client.execute(plugin, body),
        runHttp: (t, signal) => this.http.execute(t, signal),
        notImplemented: this.notImplemented,
        pool: this.pool,
        report,
        log: this.opts.log,
        retry: this.opts.retry,
        onCall: (plugin, outcome, seconds) => {
          this.metrics.calls.inc({ plugin, outcome });
          this.metrics.callSeconds.observe({ plugin }, seconds);
        },
      },
      abort.signal,
    )
      .catch((err: unknown) => {
        // A bug, not a plugin failure: record it on the node rather than leaving it hanging.
        this.opts.log.error('task crashed', { nodeId, error: errorMessage(err) });
        report(nodeId, boundResult({ phase: 'Error', message: `agent error: ${errorMessage(err)}` }));
      })
      .finally(() => {
        if (this.running.get(nodeId) === abort) {
          this.running.delete(nodeId);
          if (!abort.signal.aborted) this.finished.add(nodeId);
        }
        this.metrics.tasksRunning.set(this.running.size);
      });
  }
}
