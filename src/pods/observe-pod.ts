/**
 * What a step pod means for its node: V1Pod → PodObservation (src/engine/contract.ts). Pure.
 *
 * The node's fate follows the main container, not the pod phase: sidecars are stopped on
 * purpose, so their exit codes do not count, and the outputs come from the wait container's
 * report (wait-report.ts) in its termination message. The observation is final once the pod
 * phase is final or both main and wait have terminated.
 */
import type { V1ContainerStatus, V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import type { Artifact, Outputs } from '../api/index.js';
import { LABEL_NODE_ID, parseUserJson } from '../api/index.js';
import type { ContainerObservation, PodObservation } from '../engine/index.js';
import { ANNOTATION_OUTPUT_ARTIFACTS } from './layout.js';
import { MAIN_CONTAINER, WAIT_CONTAINER } from '../api/index.js';
import { ANNOTATION_CONTAINER_SET, SKIPPED_PREFIX } from './container-set.js';
import { parseWaitReport, type WaitReport } from './wait-report.js';

/** Waiting reasons that mean the pod will not start by itself; reported while Pending. */
const STUCK_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'CrashLoopBackOff',
]);

/**
 * Reasons of a terminated container that never ran its command: containerd and CRI-O say
 * StartError (exit code 128; the process could not be started), Docker said ContainerCannotRun.
 */
const NOT_STARTED_REASONS = new Set(['StartError', 'ContainerCannotRun']);

export function observePod(pod: V1Pod): PodObservation {
  const status = pod.status ?? {};
  const base: Omit<PodObservation, 'phase'> = {
    podName: pod.metadata?.name ?? '',
    nodeId: pod.metadata?.labels?.[LABEL_NODE_ID] ?? '',
    ...(pod.metadata?.labels ? { labels: pod.metadata.labels } : {}),
    ...(status.startTime ? { startedAt: iso(status.startTime) } : {}),
    ...(pod.spec?.nodeName ? { hostNodeName: pod.spec.nodeName } : {}),
  };
  const statuses = status.containerStatuses ?? [];
  const set = setMembers(pod);
  // A container set's failed container other than main is why the step failed (main, if any,
  // then did not run); a set without main ends when all of its containers have.
  const failedMember = set
    ?.filter((n) => n !== MAIN_CONTAINER)
    .map((n) => find(statuses, n))
    .find((s) => (s?.state?.terminated?.exitCode ?? 0) !== 0);
  const setWithoutMain = set !== undefined && !set.includes(MAIN_CONTAINER);
  if (set) base.containers = set.map((n) => containerView(n, find(statuses, n)));
  const mainT = setWithoutMain ? setEnd(set, statuses) : find(statuses, MAIN_CONTAINER)?.state?.terminated;
  const waitT = find(statuses, WAIT_CONTAINER)?.state?.terminated;
  const setEnded = !set || set.every((n) => find(statuses, n)?.state?.terminated !== undefined);
  const final = status.phase === 'Succeeded' || status.phase === 'Failed' || (mainT !== undefined && waitT !== undefined && setEnded);

  // A main container the runtime could not start never ran the emissary, so main.done never
  // comes and the wait container would wait for it forever: the step has failed, and the pod,
  // still running, is stopped by the engine (`containersRunning`).
  const notStarted = !final && !setWithoutMain && mainT && NOT_STARTED_REASONS.has(mainT.reason ?? '') ? mainT : undefined;
  if (notStarted) {
    const finishedAt = lastFinish(statuses);
    return {
      ...base,
      ...(finishedAt ? { finishedAt } : {}),
      phase: 'Failed',
      message: `the main container could not start: ${describe(notStarted)}`,
      containersRunning: true,
    };
  }

  if (!final) {
    if (pod.metadata?.deletionTimestamp) return { ...base, phase: 'Deleted', message: 'the pod was deleted before the step finished' };
    if (status.phase === 'Running') {
      const ready = find(statuses, MAIN_CONTAINER)?.ready === true;
      // The wait container (or a sidecar) runs while main cannot be pulled or created: say why.
      const message = stuckMessage(statuses);
      return {
        ...base,
        phase: 'Running',
        ...(message ? { message } : {}),
        ...(ready ? { ready } : {}),
        ...(status.podIP ? { podIP: status.podIP } : {}),
      };
    }
    const message = pendingMessage(pod);
    return { ...base, phase: 'Pending', ...(message ? { message } : {}) };
  }

  const finishedAt = lastFinish([...(status.initContainerStatuses ?? []), ...statuses]);
  const done = { ...base, ...(finishedAt ? { finishedAt } : {}) };

  if (!mainT) {
    // A sidecar (an artifact driver) stopped with the pod is not why it failed: a plain init container is.
    const sidecars = new Set((pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
    const failed = (status.initContainerStatuses ?? []).filter((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
    const initFailure = failed.find((s) => !sidecars.has(s.name)) ?? failed[0];
    if (initFailure)
      return { ...done, phase: 'Failed', message: `init container ${initFailure.name}: ${describe(initFailure.state!.terminated!)}` };
    const why = [status.reason, status.message].filter(Boolean).join(': ');
    return { ...done, phase: 'Failed', message: why || 'the pod ended before its main container ran' };
  }

  const parsed = waitT?.message ? parseWaitReport(waitT.message) : undefined;
  const report: WaitReport | undefined = parsed && 'report' in parsed ? parsed.report : undefined;
  const outputs: Outputs = { exitCode: String(mainT.exitCode) };
  if (report?.result !== undefined) outputs.result = report.result;
  if (report?.parameters.length) outputs.parameters = report.parameters.map((p) => ({ name: p.name, value: p.value }));
  if (report?.artifacts?.length) {
    const planned = plannedArtifacts(pod);
    const uploaded = report.artifacts.map((n) => planned.get(n)).filter((a) => a !== undefined);
    if (uploaded.length) outputs.artifacts = uploaded;
  }

  if (failedMember) {
    return { ...done, phase: 'Failed', message: `container ${failedMember.name}: ${describe(failedMember.state!.terminated!)}`, outputs };
  }
  if (mainT.exitCode !== 0) return { ...done, phase: 'Failed', message: describe(mainT), outputs };
  if (report?.error) return { ...done, phase: 'Failed', message: report.error, outputs };
  if (parsed && 'error' in parsed) return { ...done, phase: 'Failed', message: parsed.error, outputs };
  if (!waitT) return { ...done, phase: 'Failed', message: 'the wait container did not finish, so the outputs were not collected', outputs };
  if (waitT.exitCode !== 0 || !report)
    return { ...done, phase: 'Failed', message: `the wait container failed to collect the outputs: ${describe(waitT)}`, outputs };
  const note =
    report.resultTruncatedFrom !== undefined
      ? `outputs.result was shortened from ${report.resultTruncatedFrom} to ${Buffer.byteLength(report.result ?? '')} bytes to fit the termination message`
      : undefined;
  return {
    ...done,
    phase: 'Succeeded',
    outputs,
    ...(note ? { message: note } : {}),
    ...(report.resultTruncatedFrom !== undefined ? { resultTruncatedFrom: report.resultTruncatedFrom } : {}),
  };
}

/**
 * The artifact records the pod was told to upload (its annotation, written by the controller
 * from the repository): what the node's outputs show once the wait side reports them uploaded.
 */
function plannedArtifacts(pod: V1Pod): Map<string, Artifact> {
  const out = new Map<string, Artifact>();
  const text = pod.metadata?.annotations?.[ANNOTATION_OUTPUT_ARTIFACTS];
  if (!text) return out;
  try {
    const records = parseUserJson(text, ANNOTATION_OUTPUT_ARTIFACTS) as Artifact[];
    for (const r of Array.isArray(records) ? records : []) if (r && typeof r.name === 'string') out.set(r.name, r);
  } catch {
    // A pod whose annotation cannot be read reports no artifacts; the engine then names the missing ones.
  }
  return out;
}

/** "OOMKilled (exit code 137)", "Error (exit code 1): <message>". */
function describe(t: V1ContainerStateTerminated): string {
  const head = `${t.reason || 'Error'} (exit code ${t.exitCode})`;
  const msg = t.message?.trim();
  return msg ? `${head}: ${msg.length > 512 ? `${msg.slice(0, 512)}…` : msg}` : head;
}

/** Why a pending pod is not starting, when it will not start by itself. */
function pendingMessage(pod: V1Pod): string | undefined {
  const status = pod.status ?? {};
  const stuck = stuckMessage([...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]);
  if (stuck) return stuck;
  const unschedulable = status.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unschedulable?.message) return unschedulable.message;
  return undefined;
}

/** The first container waiting for a reason that will not clear by itself, as "name: reason: message". */
function stuckMessage(statuses: V1ContainerStatus[]): string | undefined {
  for (const s of statuses) {
    const w = s.state?.waiting;
    if (w?.reason && STUCK_REASONS.has(w.reason)) return `${s.name}: ${w.reason}${w.message ? `: ${w.message}` : ''}`;
  }
  return undefined;
}

/** One container of a set as the engine sees it: skipped (its termination message says so), done, failed, running or waiting. */
function containerView(name: string, s: V1ContainerStatus | undefined): ContainerObservation {
  const t = s?.state?.terminated;
  if (t) {
    const times = {
      ...(t.startedAt ? { startedAt: iso(t.startedAt) } : {}),
      ...(t.finishedAt ? { finishedAt: iso(t.finishedAt) } : {}),
    };
    if (t.exitCode !== 0) return { name, phase: 'Failed', message: describe(t), ...times };
    if (t.message?.startsWith(SKIPPED_PREFIX)) return { name, phase: 'Skipped', message: t.message.trim(), ...times };
    return { name, phase: 'Succeeded', ...times };
  }
  const r = s?.state?.running;
  if (r) return { name, phase: 'Running', ...(r.startedAt ? { startedAt: iso(r.startedAt) } : {}) };
  return { name, phase: 'Pending' };
}

/** The container names of a containerSet pod (its annotation), or undefined for other pods. */
function setMembers(pod: V1Pod): string[] | undefined {
  const text = pod.metadata?.annotations?.[ANNOTATION_CONTAINER_SET];
  if (!text) return undefined;
  try {
    const names = parseUserJson(text, ANNOTATION_CONTAINER_SET) as unknown;
    return Array.isArray(names) && names.every((n) => typeof n === 'string') ? names : undefined;
  } catch {
    return undefined;
  }
}

/** A set without main has ended when every container has: exit code 0, or the first failure's. */
function setEnd(set: string[], statuses: V1ContainerStatus[]): V1ContainerStateTerminated | undefined {
  const ended = set.map((n) => find(statuses, n)?.state?.terminated);
  if (ended.some((t) => t === undefined)) return undefined;
  return ended.find((t) => t!.exitCode !== 0) ?? { exitCode: 0 };
}

function find(statuses: V1ContainerStatus[], name: string): V1ContainerStatus | undefined {
  return statuses.find((s) => s.name === name);
}

function lastFinish(statuses: V1ContainerStatus[]): string | undefined {
  let last: string | undefined;
  for (const s of statuses) {
    const f = s.state?.terminated?.finishedAt;
    if (f && (!last || iso(f) > last)) last = iso(f);
  }
  return last;
}

/** Timestamps are Date objects from the typed client and strings from raw watch events. */
function iso(t: Date | string): string {
  return typeof t === 'string' ? new Date(t).toISOString() : t.toISOString();
}
