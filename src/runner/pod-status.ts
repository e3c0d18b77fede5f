/**
 * The pod status a kubelet would report, computed from the runner's view of its containers.
 * Pure, so the phase rules are tested without processes: restartPolicy Never and OnFailure
 * (Always restarts like OnFailure and also after success). Timestamps are Date objects, as
 * client-node's types declare; they reach the API server as JSON (ISO strings).
 */
import type { V1ContainerState, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { LOCAL_IP } from './field-ref.js';

export type ContainerPhase =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: string }
  | { kind: 'terminated'; exitCode: number; reason: string; message?: string; signal?: number; startedAt: string; finishedAt: string };

export interface ContainerView {
  name: string;
  image: string;
  phase: ContainerPhase;
  /** The previous run, after a restart. */
  last?: ContainerPhase;
  restartCount: number;
  /** Process id of the current run, reported as the container id. */
  pid?: number;
  /** An init container with restartPolicy Always (a Kubernetes sidecar): it runs beside the containers. */
  sidecar?: boolean;
}

export interface PodView {
  restartPolicy: string;
  startTime?: string;
  /** Volumes and environment are ready: the "sandbox" exists. */
  sandboxReady: boolean;
  init: ContainerView[];
  containers: ContainerView[];
  /** Set when the pod failed for a reason of its own (e.g. its processes were lost). */
  failure?: { reason: string; message: string };
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** Whether a terminated container will be started again under the policy. */
export function willRestart(policy: string, exitCode: number): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

export function podPhase(v: PodView): PodPhase {
  if (v.failure) return 'Failed';
  for (const c of v.init) {
    if (c.sidecar) continue; // started before the next init container; its exits decide nothing
    if (c.phase.kind !== 'terminated') return 'Pending';
    if (c.phase.exitCode !== 0) return willRestart(v.restartPolicy, c.phase.exitCode) ? 'Pending' : 'Failed';
  }
  const phases = v.containers.map((c) => c.phase);
  if (
    phases.some(
      (p) =>
        p.kind === 'waiting' &&
        (p.reason === 'PodInitializing' || p.reason === 'ContainerCreating' || p.reason === 'CreateContainerConfigError'),
    )
  ) {
    return 'Pending';
  }
  if (phases.some((p) => p.kind !== 'terminated')) return 'Running';
  const terminated = phases as Array<Extract<ContainerPhase, { kind: 'terminated' }>>;
  if (terminated.some((p) => willRestart(v.restartPolicy, p.exitCode))) return 'Running';
  return terminated.every((p) => p.exitCode === 0) ? 'Succeeded' : 'Failed';
}

function state(p: ContainerPhase): V1ContainerState {
  switch (p.kind) {
    case 'waiting':
      return { waiting: { reason: p.reason, ...(p.message ? { message: p.message } : {}) } };
    case 'running':
      return { running: { startedAt: new Date(p.startedAt) } };
    case 'terminated':
      return {
        terminated: {
          exitCode: p.exitCode,
          reason: p.reason,
          ...(p.message ? { message: p.message } : {}),
          ...(p.signal ? { signal: p.signal } : {}),
          startedAt: new Date(p.startedAt),
          finishedAt: new Date(p.finishedAt),
        },
      };
  }
}

function containerStatus(c: ContainerView): V1ContainerStatus {
  const running = c.phase.kind === 'running';
  const status: V1ContainerStatus = {
    name: c.name,
    image: c.image || 'none',
    imageID: `plugflow-runner://${c.image || 'none'}`,
    ready: running,
    started: running,
    restartCount: c.restartCount,
    state: state(c.phase),
    ...(c.last ? { lastState: state(c.last) } : {}),
  };
  if (c.pid) status.containerID = `plugflow-runner://${c.pid}`;
  return status;
}

/** The status fields the runner owns; `now` stamps changed conditions. */
export function podStatus(v: PodView, previous: V1PodCondition[] = [], now = new Date().toISOString()): V1PodStatus {
  const phase = podPhase(v);
  const initialized = v.init.every((c) =>
    c.sidecar ? c.phase.kind !== 'waiting' : c.phase.kind === 'terminated' && c.phase.exitCode === 0,
  );
  const allRunning = v.containers.length > 0 && v.containers.every((c) => c.phase.kind === 'running');
  const done = phase === 'Succeeded' || phase === 'Failed';
  const cond = (type: string, ok: boolean, reason?: string): V1PodCondition => {
    const before = previous.find((c) => c.type === type);
    const status = ok ? 'True' : 'False';
    const changed = !before || before.status !== status;
    return {
      type,
      status,
      ...(reason && !ok ? { reason } : {}),
      lastTransitionTime: changed ? new Date(now) : asDate(before.lastTransitionTime),
    };
  };
  const conditions: V1PodCondition[] = [
    cond('PodReadyToStartContainers', v.sandboxReady),
    cond('Initialized', initialized, 'ContainersNotInitialized'),
    cond('Ready', allRunning, done ? 'PodCompleted' : 'ContainersNotReady'),
    cond('ContainersReady', allRunning, done ? 'PodCompleted' : 'ContainersNotReady'),
  ];
  const scheduled = previous.find((c) => c.type === 'PodScheduled');
  if (scheduled) conditions.push(scheduled);
  return {
    phase,
    conditions,
    hostIP: LOCAL_IP,
    hostIPs: [{ ip: LOCAL_IP }],
    podIP: LOCAL_IP,
    podIPs: [{ ip: LOCAL_IP }],
    ...(v.startTime ? { startTime: new Date(v.startTime) } : {}),
    ...(v.failure ? { reason: v.failure.reason, message: v.failure.message } : {}),
    ...(v.init.length ? { initContainerStatuses: v.init.map(containerStatus) } : {}),
    containerStatuses: v.containers.map(containerStatus),
  };
}

/** Timestamps read from the API server are strings (raw JSON) though typed Date; either is accepted. */
function asDate(t: Date | string | undefined): Date | undefined {
  return t === undefined ? undefined : new Date(t);
}

/** Kubelet-style reason of a finished process. */
export function terminationReason(exitCode: number): string {
  return exitCode === 0 ? 'Completed' : 'Error';
}
