/**
 * The local pod runner: a stand-in kubelet (and, for its one node, scheduler) for machines
 * without one. It registers a Node, binds pending pods that fit it, runs their containers as
 * local processes (pod-worker.ts) and reports their status; when a pod is deleted it stops the
 * processes and removes the pod, as a kubelet finalizes a deletion. See the README for what it
 * does not emulate.
 */
import type { KubeConfig, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { chmodSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { PODS } from '../kube/resource.js';
import { createLogger, type Logger } from '../log/logger.js';
import { ensureEmissaryBinary } from '../pod-side/emissary-binary.js';
import type { NodeResources } from './field-ref.js';
import { staged, type Mount, type NamespaceTools } from './launch.js';
import { readContainerLog, type ReadLogOptions } from './logs.js';
import { detectNamespaceTools } from './namespaces.js';
import { startKubeletServer } from './kubelet-server.js';
import { NodeHeartbeat, localNodeResources } from './node.js';
import { PodWatch } from './pod-informer.js';
import { PodWorker } from './pod-worker.js';
import { DEFAULT_SCHEDULER, unschedulableReason } from './scheduling.js';
import { pdeathsigTool } from './parent-death.js';
import { CLI_DIR, NODE_IN_PODS, REPO_ROOT, executableByOthers, unreadablePackage, writeShim } from './shim.js';
import { StatusWriter } from './status-writer.js';
import { errorMessage } from '../log/error-message.js';

import { podPorts, serviceEnvFor, startedBefore } from './pod-facts.js';

const RESCHEDULE_EVERY_MS = 5000;

export interface RunnerOptions {
  kubeConfig: KubeConfig;
  /** Directory for logs, volumes and the `plugflow` shim. */
  dir: string;
  /** Default: `plugflow-<hostname>`. */
  nodeName?: string;
  /** schedulerName values whose pods this runner binds (default: default-scheduler). */
  schedulers?: string[];
  /** Only pods of this namespace (default: all); lets several runners share an API server. */
  namespace?: string;
  /** Set false to run without mount namespaces even where they work. */
  namespaces?: boolean;
  log?: Logger;
}

export class PodRunner {
  readonly dir: string;
  readonly nodeName: string;
  /** Whether containers get private mount namespaces (volumes at their mountPaths). */
  namespacesEnabled = false;
  private readonly kc: KubeConfig;
  private readonly log: Logger;
  /** Set by start(), before anything can ask for a status write. */
  private status!: StatusWriter;
  private readonly workers = new Map<string, PodWorker>();
  private readonly deleting = new Set<string>();
  private readonly unschedulable = new Map<string, string>();
  /** Ports declared by pods bound here and not yet ended: all pods share the host's network. */
  private readonly heldPorts = new Map<string, Set<number>>();
  /** Pods waiting for a port another pod holds; looked at again when a pod ends. */
  private readonly portWaiters = new Map<string, V1Pod>();
  private readonly watches: PodWatch[] = [];
  private heartbeat?: NodeHeartbeat;
  /** Set by start(), before the heartbeat and the watches that use it. */
  private client?: KubeClient;
  private kubelet?: { port: number; close(): Promise<void> };
  private rescheduler?: NodeJS.Timeout;
  private tools?: NamespaceTools;
  private pdeathsig?: string;
  private shimDir = '';
  private serviceEnv: Record<string, string> = {};
  private resources: NodeResources = localNodeResources();
  private stopped = false;

  constructor(private readonly opts: RunnerOptions) {
    this.kc = opts.kubeConfig;
    this.dir = resolve(opts.dir);
    this.nodeName =
      opts.nodeName ??
      `plugflow-${hostname()
        .toLowerCase()
        .replace(/[^a-z0-9.-]/g, '-')}`;
    this.log = opts.log ?? createLogger('runner');
  }

  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    chmodSync(this.dir, 0o755);
    if (this.opts.namespaces !== false) {
      const found = await detectNamespaceTools(this.dir);
      if ('tools' in found) this.tools = { ...found.tools, binds: this.packageBinds() };
      else {
        this.log.warn(
          `containers run without mount namespaces: ${found.reason}. Volumes are NOT mounted at their mountPaths ` +
            '(processes see the host filesystem only), so step pods and pods that read mounted files will not work.',
        );
      }
    }
    this.namespacesEnabled = !!this.tools;
    const binDir = join(this.dir, '_bin');
    let emissary: string | undefined;
    try {
      emissary = await ensureEmissaryBinary();
    } catch (err) {
      this.log.warn(`no emissary, so step pods cannot run here: ${errorMessage(err)}`);
    }
    this.shimDir = this.tools ? staged(binDir, this.tools) : binDir;
    if (emissary) {
      const nodeBound = this.tools?.binds?.some((b) => b.target === NODE_IN_PODS);
      writeShim({
        binDir,
        emissary,
        binDirInside: this.shimDir,
        packageInside: this.tools ? CLI_DIR : REPO_ROOT,
        nodeInside: nodeBound ? NODE_IN_PODS : process.execPath,
      });
    }
    const unreadable = this.tools && unreadablePackage();
    if (unreadable) {
      this.log.warn(
        `containers that run as another user cannot read the plugflow package at ${REPO_ROOT} (${unreadable}), so agent and step pods will fail; make it readable: chmod -R o+rX ${REPO_ROOT}`,
      );
    }
    this.pdeathsig = pdeathsigTool();
    if (!this.pdeathsig)
      this.log.warn('setpriv --pdeathsig (util-linux 2.33+) is not available: if the runner is killed, its containers keep running');
    this.serviceEnv = serviceEnvFor(this.kc);

    this.kubelet = await startKubeletServer({
      root: this.dir,
      mayGrow: (ns, pod, container) => this.workers.get(`${ns}/${pod}`)?.mayGrow(container) ?? false,
    });
    const client = await KubeClient.fromKubeConfig(this.kc);
    this.client = client;
    this.status = new StatusWriter(client, this.log);
    this.heartbeat = new NodeHeartbeat(client, this.nodeName, this.resources, this.log, this.kubelet.port);
    await this.heartbeat.start();

    const bound = new PodWatch(
      client,
      `spec.nodeName=${this.nodeName}`,
      { upsert: (p) => this.onPod(p), remove: (p) => this.onPodGone(p) },
      this.log,
      this.opts.namespace,
    );
    const pending = new PodWatch(
      client,
      'spec.nodeName=',
      { upsert: (p) => this.onUnscheduled(p), remove: () => {} },
      this.log,
      this.opts.namespace,
    );
    this.watches.push(bound, pending);
    await bound.start();
    await pending.start();
    // Like the scheduler's retry queue: pods that did not fit are looked at again now and then
    // (the node's labels or taints may have changed, or a bind failed).
    this.rescheduler = setInterval(() => {
      for (const p of pending.list()) this.onUnscheduled(p);
    }, RESCHEDULE_EVERY_MS);
    this.rescheduler.unref();
    this.log.info('local pod runner started', { node: this.nodeName, dir: this.dir, mountNamespaces: this.namespacesEnabled });
  }

  /**
   * What every container sees at a fixed path: this plugflow package (read-only) for the
   * `plugflow` shim, and node when other users may not execute it where it is (shim.ts).
   */
  private packageBinds(): Mount[] {
    const binds: Mount[] = [{ source: REPO_ROOT, target: CLI_DIR, readOnly: true, file: false }];
    if (!executableByOthers(process.execPath)) binds.push({ source: process.execPath, target: NODE_IN_PODS, readOnly: true, file: true });
    return binds;
  }

  /** Stops watching, stops every pod's processes (their statuses record it) and marks the node not ready. */
  async stop(graceSeconds = 5): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.rescheduler) clearInterval(this.rescheduler);
    await Promise.all(this.watches.map((w) => w.stop()));
    await Promise.all(
      [...this.workers.values()].map(async (w) => {
        await w.terminate(graceSeconds);
        await w.report();
      }),
    );
    await this.heartbeat?.stop();
    await this.client?.close();
    await this.kubelet?.close();
    this.log.info('local pod runner stopped', { node: this.nodeName });
  }

  /** A container's log (see logs.ts). */
  readLog(namespace: string, pod: string, container: string, opts?: ReadLogOptions): string {
    return readContainerLog(this.dir, namespace, pod, container, opts);
  }

  private onUnscheduled(pod: V1Pod): void {
    if (this.stopped || pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    const node = this.heartbeat?.current();
    if (!node) return;
    const reason = unschedulableReason(pod, node, this.opts.schedulers ?? [DEFAULT_SCHEDULER]);
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    if (reason) {
      if (!reason.startsWith('schedulerName') && this.unschedulable.get(key) !== reason) {
        this.unschedulable.set(key, reason);
        void this.markUnschedulable(pod, reason);
      }
      return;
    }
    const conflict = this.portConflict(pod);
    if (conflict) {
      this.portWaiters.set(key, pod);
      if (this.unschedulable.get(key) !== conflict) {
        this.unschedulable.set(key, conflict);
        void this.markUnschedulable(pod, conflict);
      }
      return;
    }
    this.portWaiters.delete(key);
    this.unschedulable.delete(key);
    this.heldPorts.set(key, podPorts(pod));
    void this.bind(pod);
  }

  /**
   * Containers of every pod run in the host's network here (a kubelet gives each pod its own),
   * so a pod whose ports another running pod declares waits until they are free — the way the
   * scheduler keeps host ports apart — instead of failing with EADDRINUSE.
   */
  private portConflict(pod: V1Pod): string | undefined {
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    for (const port of podPorts(pod)) {
      for (const [holder, ports] of this.heldPorts) {
        if (holder !== key && ports.has(port))
          return `port ${port} is in use by pod ${holder} (the local runner gives all pods one network)`;
      }
    }
    return undefined;
  }

  private releasePorts(key: string): void {
    if (!this.heldPorts.delete(key)) return;
    for (const waiting of [...this.portWaiters.values()]) this.onUnscheduled(waiting);
  }

  private async bind(pod: V1Pod): Promise<void> {
    const { name, namespace } = pod.metadata as { name: string; namespace: string };
    try {
      await this.client!.createSubresource(PODS, namespace, name, 'binding', {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace, uid: pod.metadata!.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: this.nodeName },
      });
      this.log.info('bound pod', { pod: `${namespace}/${name}`, node: this.nodeName });
    } catch (err) {
      // 409: bound already (another runner, or a retried event); 404: gone.
      const settled = isConflict(err) || isAlreadyExists(err) || isNotFound(err);
      if (!settled) this.log.warn('binding pod failed', { pod: `${namespace}/${name}`, error: errorMessage(err) });
    }
  }

  private markUnschedulable(pod: V1Pod, reason: string): Promise<void> {
    const message = `0/1 nodes are available: ${reason}`;
    this.log.info('pod does not fit the runner node', { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, reason });
    return this.status.request(pod.metadata!.namespace!, pod.metadata!.name!, pod.metadata!.uid!, (current) => ({
      ...current.status,
      phase: 'Pending',
      conditions: [
        ...(current.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'),
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: new Date() },
      ],
    }));
  }

  private onPod(pod: V1Pod): void {
    if (this.stopped) return;
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    let worker = this.workers.get(key);
    if (worker && worker.uid !== pod.metadata!.uid) {
      // The old pod of this name is gone and a new one took its place.
      void this.finish(worker, 0);
      worker = undefined;
    }
    if (pod.metadata?.deletionTimestamp) {
      void this.onDeleting(pod, worker);
      return;
    }
    if (worker) return;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    if (startedBefore(pod)) {
      void this.markLost(pod);
      return;
    }
    worker = new PodWorker(pod, {
      client: this.client!,
      root: this.dir,
      tools: this.tools,
      pdeathsig: this.pdeathsig,
      shimDir: this.shimDir,
      serviceEnv: this.serviceEnv,
      node: this.resources,
      status: this.status,
      log: this.log,
    });
    this.workers.set(key, worker);
    this.heldPorts.set(key, podPorts(pod));
    this.log.info('starting pod', { pod: key, uid: pod.metadata!.uid });
    void worker.start().finally(() => this.releasePorts(key));
  }

  /** A pod marked for deletion: stop it within its grace period, then remove it. */
  private async onDeleting(pod: V1Pod, worker: PodWorker | undefined): Promise<void> {
    const uid = pod.metadata!.uid!;
    if (this.deleting.has(uid)) return;
    this.deleting.add(uid);
    const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    try {
      if (worker) {
        await worker.terminate(grace);
        await worker.report();
      }
      // 404: gone already; 409: the uid precondition failed, so a new pod holds the name.
      await this.client!.delete(PODS, pod.metadata!.namespace!, pod.metadata!.name!, { uid, gracePeriodSeconds: 0 }).catch((err) => {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      });
      this.log.info('pod deleted', { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}` });
    } catch (err) {
      this.log.warn('finishing a pod deletion failed; will retry on the next event', { pod: pod.metadata!.name, error: errorMessage(err) });
      this.deleting.delete(uid);
      return;
    }
    if (worker) {
      worker.cleanup();
      if (this.workers.get(worker.key) === worker) this.workers.delete(worker.key);
    }
  }

  /** The pod vanished from the API (force deletion): stop its processes anyway. */
  private onPodGone(pod: V1Pod): void {
    const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    const worker = this.workers.get(key);
    if (worker && worker.uid === pod.metadata!.uid) void this.finish(worker, pod.spec?.terminationGracePeriodSeconds ?? 30);
    this.unschedulable.delete(key);
    this.deleting.delete(pod.metadata!.uid!);
  }

  private async finish(worker: PodWorker, graceSeconds: number): Promise<void> {
    if (this.workers.get(worker.key) === worker) this.workers.delete(worker.key);
    await worker.terminate(graceSeconds);
    worker.cleanup();
    this.releasePorts(worker.key);
  }

  /** A pod that ran under an earlier runner process: its processes are gone. */
  private markLost(pod: V1Pod): Promise<void> {
    const finishedAt = new Date();
    this.log.warn('pod was running under a previous runner; marking it failed', { pod: pod.metadata!.name });
    return this.status.request(pod.metadata!.namespace!, pod.metadata!.name!, pod.metadata!.uid!, (current): V1PodStatus => {
      const lose = (statuses: V1PodStatus['containerStatuses']) =>
        statuses?.map((s) =>
          s.state?.terminated
            ? s
            : {
                ...s,
                ready: false,
                started: false,
                state: {
                  terminated: {
                    exitCode: 137,
                    reason: 'Error',
                    message: 'the local pod runner restarted; the process was lost',
                    startedAt: s.state?.running?.startedAt,
                    finishedAt,
                  },
                },
              },
        );
      return {
        ...current.status,
        phase: 'Failed',
        reason: 'RunnerRestarted',
        message: 'the local pod runner restarted and lost the processes of this pod',
        initContainerStatuses: lose(current.status?.initContainerStatuses),
        containerStatuses: lose(current.status?.containerStatuses),
      };
    });
  }
}
