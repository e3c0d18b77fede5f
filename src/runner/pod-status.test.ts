import { describe, expect, it } from 'vitest';
import { podPhase, podStatus, type ContainerPhase, type ContainerView, type PodView } from './pod-status.js';

const T = '2025-01-01T00:00:00.000Z';
const waiting = (reason = 'PodInitializing'): ContainerPhase => ({ kind: 'waiting', reason });
const running: ContainerPhase = { kind: 'running', startedAt: T };
const exited = (exitCode: number): ContainerPhase => ({
  kind: 'terminated',
  exitCode,
  reason: exitCode ? 'Error' : 'Completed',
  startedAt: T,
  finishedAt: T,
});
const c = (name: string, phase: ContainerPhase): ContainerView => ({ name, image: 'img', phase, restartCount: 0 });
const view = (init: ContainerPhase[], containers: ContainerPhase[], restartPolicy = 'Never'): PodView => ({
  restartPolicy,
  sandboxReady: true,
  startTime: T,
  init: init.map((p, i) => c(`i${i}`, p)),
  containers: containers.map((p, i) => c(`c${i}`, p)),
});

describe('podPhase', () => {
  it('lets a sidecar (an init container with restartPolicy Always) run beside the containers without deciding the phase', () => {
    const withSidecar = (sidecar: ContainerPhase, init: ContainerPhase, containers: ContainerPhase[]): PodView => {
      const v = view([sidecar, init], containers);
      v.init[0] = { ...v.init[0]!, sidecar: true };
      return v;
    };
    expect(podPhase(withSidecar(running, running, [waiting()]))).toBe('Pending');
    expect(podPhase(withSidecar(running, exited(0), [running, running]))).toBe('Running');
    // Stopped with SIGTERM once the containers ended: the containers say Succeeded.
    expect(podPhase(withSidecar(exited(143), exited(0), [exited(0), exited(0)]))).toBe('Succeeded');
    expect(podPhase(withSidecar(running, exited(1), [waiting()]))).toBe('Failed');
    const status = podStatus(withSidecar(running, exited(0), [running]));
    expect(status.conditions?.find((x) => x.type === 'Initialized')?.status).toBe('True');
  });

  it('follows init containers, then the containers, under restartPolicy Never', () => {
    expect(podPhase(view([running], [waiting()]))).toBe('Pending');
    expect(podPhase(view([exited(0)], [waiting('ContainerCreating')]))).toBe('Pending');
    expect(podPhase(view([exited(1)], [waiting()]))).toBe('Failed');
    expect(podPhase(view([exited(0)], [running, exited(0)]))).toBe('Running');
    expect(podPhase(view([], [exited(0), exited(0)]))).toBe('Succeeded');
    expect(podPhase(view([], [exited(0), exited(2)]))).toBe('Failed');
  });

  it('keeps a pod with restarting containers running under OnFailure and Always', () => {
    expect(podPhase(view([exited(1)], [waiting()], 'OnFailure'))).toBe('Pending');
    expect(podPhase(view([], [exited(1)], 'OnFailure'))).toBe('Running');
    expect(podPhase(view([], [exited(0)], 'OnFailure'))).toBe('Succeeded');
    expect(podPhase(view([], [exited(0)], 'Always'))).toBe('Running');
  });

  it('fails a pod with a failure of its own', () => {
    expect(podPhase({ ...view([], [running]), failure: { reason: 'Lost', message: 'm' } })).toBe('Failed');
  });
});

describe('podStatus', () => {
  it('reports container states, conditions and addresses like a kubelet', () => {
    const s = podStatus(view([exited(0)], [exited(0), exited(3)]), [{ type: 'PodScheduled', status: 'True' }], T);
    expect(s.phase).toBe('Failed');
    expect(s.podIP).toBe('127.0.0.1');
    expect(s.initContainerStatuses![0].state!.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(s.containerStatuses![1].state!.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(s.conditions!.map((x) => `${x.type}=${x.status}`)).toEqual([
      'PodReadyToStartContainers=True',
      'Initialized=True',
      'Ready=False',
      'ContainersReady=False',
      'PodScheduled=True',
    ]);
    expect(s.conditions!.find((x) => x.type === 'Ready')!.reason).toBe('PodCompleted');
  });

  it('keeps the transition time of a condition that did not change', () => {
    const first = podStatus(view([], [running]), [], '2025-01-01T00:00:00.000Z');
    const second = podStatus(view([], [running]), first.conditions, '2025-01-01T00:01:00.000Z');
    expect(second.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime).toEqual(new Date('2025-01-01T00:00:00.000Z'));
    const third = podStatus(view([], [exited(0)]), second.conditions, '2025-01-01T00:02:00.000Z');
    expect(third.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime).toEqual(new Date('2025-01-01T00:02:00.000Z'));
  });
});
