/**
 * One pod on the local runner, from volumes to the last container: a kubelet's pod worker in
 * small. Init containers run one after another, then all containers at once; restartPolicy
 * Never / OnFailure / Always decides what happens after an exit. An init container with its own
 * restartPolicy Always is a sidecar, as in Kubernetes: once started, the next init container
 * starts; it is restarted whenever it exits, and stopped (SIGTERM, then SIGKILL after the grace
 * period) once the containers have ended for good, or when an init container failed the pod. Every change of state is
 * written to the pod's status. `terminate` stops the processes (SIGTERM, then SIGKILL after
 * the grace period) and waits for them.
 */
import type { V1ConfigMap, V1Container, V1Pod, V1Secret } from '@kubernetes/client-node';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { CONFIGMAPS, SECRETS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { StartError, planContainer, terminationMessage } from './container-run.js';
import { ContainerConfigError, envReferences, resolveEnv, type EnvSources } from './env.js';
import type { NodeResources } from './field-ref.js';
import { buildLaunch, type NamespaceTools } from './launch.js';
import { containerLogPath, podLogDir } from './logs.js';
import { podStatus, terminationReason, willRestart, type ContainerView, type PodView } from './pod-status.js';
import { startProcess, type ContainerProcess } from './process.js';
import type { StatusWriter } from './status-writer.js';
import { PodVolumes, VolumeError } from './volumes.js';
import { pathForUser } from './user-path.js';
import { errorMessage } from '../log/error-message.js';

export interface WorkerDeps {
  client: KubeClient;
  /** The runner directory. */
  root: string;
  tools?: NamespaceTools;
  /** setpriv that sets a parent-death signal (parent-death.ts): containers die with the runner. */
  pdeathsig?: string;
  /** The directory holding the `plugflow` shim, as containers see it. */
  shimDir: string;
  /** KUBERNETES_SERVICE_HOST and friends. */
  serviceEnv: Record<string, string>;
  node: NodeResources;
  status: StatusWriter;
  log: Logger;
}

const now = () => new Date().toISOString();
const BACKOFF_START_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

export class PodWorker {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** Per-run directory (volumes, private /tmp, termination files); removed with the pod. */
  readonly runDir: string;
  private readonly view: PodView;
  private readonly procs = new Map<string, ContainerProcess>();
  private readonly stop = new AbortController();
  private readonly volumes: PodVolumes;
  private done?: Promise<void>;
  private ended = false;
  /** The containers have ended: sidecars are no longer restarted. */
  private sidecarsDone = false;

  constructor(
    private readonly pod: V1Pod,
    private readonly deps: WorkerDeps,
  ) {
    this.namespace = pod.metadata!.namespace!;
    this.name = pod.metadata!.name!;
    this.uid = pod.metadata!.uid!;
    this.runDir = join(deps.root, '_run', this.namespace, `${this.name}-${this.uid}`);
    const spec = pod.spec!;
    const hasInit = (spec.initContainers ?? []).length > 0;
    const view = (c: V1Container, reason: string): ContainerView => ({
      name: c.name,
      image: c.image ?? '',
      phase: { kind: 'waiting', reason },
      restartCount: 0,
    });
    this.view = {
      restartPolicy: spec.restartPolicy ?? 'Always',
      startTime: now(),
      sandboxReady: false,
      init: (spec.initContainers ?? []).map((c) => ({ ...view(c, 'PodInitializing'), ...(isSidecar(c) ? { sidecar: true } : {}) })),
      containers: spec.containers.map((c) => view(c, hasInit ? 'PodInitializing' : 'ContainerCreating')),
    };
    this.volumes = new PodVolumes(pod, {
      client: deps.client,
      podDir: this.runDir,
      claimsDir: join(deps.root, '_claims'),
      node: deps.node,
      log: (msg, meta) => deps.log.warn(msg, meta),
    });
  }

  /** Starts the pod; resolves when it has run to its end (or was stopped). */
  start(): Promise<void> {
    // A pod created again under an old name starts with fresh logs.
    const logDir = podLogDir(this.deps.root, this.namespace, this.name);
    mkdirSync(logDir, { recursive: true });
    for (const c of [...(this.pod.spec!.initContainers ?? []), ...this.pod.spec!.containers])
      writeFileSync(join(logDir, `${c.name}.log`), '');
    this.done ??= this.run()
      .catch((err) => {
        this.deps.log.error('pod worker failed', { pod: this.key, error: String((err as Error)?.stack ?? err) });
        this.view.failure = { reason: 'RunnerError', message: `the local pod runner failed: ${errorMessage(err)}` };
        void this.report();
      })
      .finally(() => (this.ended = true));
    return this.done;
  }

  get key(): string {
    return `${this.namespace}/${this.name}`;
  }

  get stopping(): boolean {
    return this.stop.signal.aborted;
  }

  /** Stops every process (SIGTERM, SIGKILL after graceSeconds) and waits for the worker to end. */
  async terminate(graceSeconds: number): Promise<void> {
    if (!this.stopping) {
      this.deps.log.info('stopping pod', { pod: this.key, graceSeconds });
      this.stop.abort();
    }
    await Promise.all([...this.procs.values()].map((p) => p.stop(graceSeconds * 1000)));
    await this.done;
    this.volumes.stop();
  }

  /** Whether a container's log may still grow (it runs, will start, or will be restarted). */
  mayGrow(container: string): boolean {
    if (this.ended) return false;
    const cv = [...this.view.init, ...this.view.containers].find((c) => c.name === container);
    if (!cv) return false;
    if (cv.phase.kind !== 'terminated') return true;
    return !this.stopping && willRestart(this.view.restartPolicy, cv.phase.exitCode);
  }

  /** Removes the pod's run directory (volumes); logs stay. */
  cleanup(): void {
    this.volumes.stop();
    rmSync(this.runDir, { recursive: true, force: true });
  }

  /** Writes the current view as the pod status. */
  report(): Promise<void> {
    const view = structuredClone(this.view);
    return this.deps.status.request(this.namespace, this.name, this.uid, (current) => podStatus(view, current.status?.conditions ?? []));
  }

  private async run(): Promise<void> {
    void this.report();
    const volumes = await this.untilReady(
      () => this.volumes.prepare(),
      (msg) => {
        for (const c of [...this.view.init, ...this.view.containers])
          if (c.phase.kind === 'waiting') c.phase = { kind: 'waiting', reason: c.phase.reason, message: msg };
      },
    );
    if (!volumes) return;
    this.view.sandboxReady = true;
    void this.report();

    const spec = this.pod.spec!;
    const sidecars: Array<Promise<boolean>> = [];
    try {
      for (const [i, c] of (spec.initContainers ?? []).entries()) {
        if (isSidecar(c)) {
          sidecars.push(this.runContainer(c, this.view.init[i], volumes, 'sidecar'));
          await this.untilStarted(this.view.init[i]);
        } else if (!(await this.runContainer(c, this.view.init[i], volumes, 'init'))) {
          await this.report();
          return;
        }
      }
      for (const cv of this.view.containers) cv.phase = { kind: 'waiting', reason: 'ContainerCreating' };
      void this.report();
      await Promise.all(spec.containers.map((c, i) => this.runContainer(c, this.view.containers[i], volumes, 'container')));
    } finally {
      await this.stopSidecars(sidecars);
    }
    await this.report();
  }

  /** Waits until a sidecar runs (or ran): the next init container may start then. */
  private async untilStarted(cv: ContainerView): Promise<void> {
    while (cv.phase.kind === 'waiting' && !this.stopping) await this.sleep(50);
  }

  /** Stops the sidecars once the containers have ended (the pod's grace period) and waits for them. */
  private async stopSidecars(running: Array<Promise<boolean>>): Promise<void> {
    if (running.length === 0) return;
    this.sidecarsDone = true;
    const grace = (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    const names = (this.pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => c.name);
    await Promise.all(names.flatMap((n) => this.procs.get(n)?.stop(grace) ?? []));
    await Promise.all(running);
  }

  /** Runs a container until it ends for good; true when it succeeded. */
  private async runContainer(
    c: V1Container,
    cv: ContainerView,
    volumes: Map<string, string>,
    kind: 'init' | 'sidecar' | 'container',
  ): Promise<boolean> {
    let backoff = BACKOFF_START_MS;
    const init = kind === 'init';
    for (;;) {
      if (this.stopping || (kind === 'sidecar' && this.sidecarsDone)) return false;
      const env = await this.untilReady(
        () => this.containerEnv(c),
        (msg) => (cv.phase = { kind: 'waiting', reason: 'CreateContainerConfigError', message: msg }),
      );
      if (!env) return false;
      const code = await this.runOnce(c, cv, env, volumes);
      const restart =
        kind === 'sidecar'
          ? !this.sidecarsDone
          : init
            ? this.view.restartPolicy !== 'Never' && code !== 0
            : willRestart(this.view.restartPolicy, code);
      if (!restart || this.stopping) return code === 0;
      cv.last = cv.phase;
      cv.restartCount++;
      cv.phase = { kind: 'waiting', reason: 'CrashLoopBackOff', message: `back-off ${backoff / 1000}s restarting container ${c.name}` };
      void this.report();
      await this.sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** One run of one container; returns its exit code. */
  private async runOnce(c: V1Container, cv: ContainerView, env: Record<string, string>, volumes: Map<string, string>): Promise<number> {
    const logPath = containerLogPath(this.deps.root, this.namespace, this.name, c.name);
    const startedAt = now();
    let plan;
    try {
      plan = planContainer({ pod: this.pod, container: c, env, volumes, runDir: this.runDir });
    } catch (err) {
      if (!(err instanceof StartError)) throw err;
      // As a runtime's StartError: the container never ran.
      cv.phase = { kind: 'terminated', exitCode: 128, reason: 'StartError', message: err.message, startedAt, finishedAt: now() };
      void this.report();
      return 128;
    }
    const processEnv = { ...this.imageEnv(c), ...env };
    const uid = c.securityContext?.runAsUser ?? this.pod.spec?.securityContext?.runAsUser;
    processEnv.PATH = `${this.deps.shimDir}:${env.PATH ?? pathForUser(process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', uid)}`;
    const proc = startProcess(buildLaunch(plan, this.deps.tools, this.deps.pdeathsig), processEnv, logPath);
    this.procs.set(c.name, proc);
    cv.pid = proc.pid;
    cv.phase = { kind: 'running', startedAt };
    void this.report();
    const exit = await proc.exited;
    this.procs.delete(c.name);
    const message = terminationMessage(c, this.runDir, exit.code, logPath);
    cv.phase = {
      kind: 'terminated',
      exitCode: exit.code,
      reason: terminationReason(exit.code),
      ...(message ? { message } : {}),
      ...(exit.signal ? { signal: exit.signal } : {}),
      startedAt,
      finishedAt: now(),
    };
    this.deps.log.info('container exited', { pod: this.key, container: c.name, exitCode: exit.code });
    void this.report();
    return exit.code;
  }

  /** What an image would provide: PATH, HOME, HOSTNAME. */
  private imageEnv(c: V1Container): Record<string, string> {
    const uid = c.securityContext?.runAsUser ?? this.pod.spec?.securityContext?.runAsUser;
    return { HOME: uid ? '/' : '/root', HOSTNAME: this.pod.spec?.hostname ?? this.name };
  }

  private async containerEnv(c: V1Container): Promise<Record<string, string>> {
    const refs = envReferences(c);
    const sources: EnvSources = { configMaps: new Map(), secrets: new Map() };
    for (const name of refs.configMaps)
      sources.configMaps.set(name, await this.fetch(() => this.deps.client.get<V1ConfigMap>(CONFIGMAPS, this.namespace, name)));
    for (const name of refs.secrets)
      sources.secrets.set(name, await this.fetch(() => this.deps.client.get<V1Secret>(SECRETS, this.namespace, name)));
    return resolveEnv(this.pod, c, sources, this.deps.serviceEnv, this.deps.node);
  }

  private async fetch<T extends V1ConfigMap | V1Secret>(get: () => Promise<T>): Promise<T | null> {
    try {
      return await get();
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /**
   * Retries `attempt` with backoff while it fails with a configuration error (missing
   * ConfigMap, Secret, claim...), showing the error through `onError`; undefined when stopped.
   */
  private async untilReady<T>(attempt: () => Promise<T>, onError: (msg: string) => void): Promise<T | undefined> {
    let backoff = BACKOFF_START_MS;
    let lastMessage = '';
    for (;;) {
      if (this.stopping) return undefined;
      try {
        return await attempt();
      } catch (err) {
        const msg = err instanceof ContainerConfigError || err instanceof VolumeError ? err.message : `${errorMessage(err)}`;
        if (msg !== lastMessage) {
          this.deps.log.warn('pod is waiting', { pod: this.key, reason: msg });
          lastMessage = msg;
          onError(msg);
          void this.report();
        }
      }
      await this.sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping) return resolve();
      const t = setTimeout(resolve, ms);
      this.stop.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}

/** A Kubernetes sidecar: an init container with restartPolicy Always. */
function isSidecar(c: V1Container): boolean {
  return c.restartPolicy === 'Always';
}
