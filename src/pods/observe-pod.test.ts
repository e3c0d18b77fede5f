import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { observePod } from './observe-pod.js';
import { encodeWaitReport } from './wait-report.js';

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:00:05.000Z';
const T2 = '2025-01-01T00:00:06.000Z';

function terminated(name: string, exitCode: number, extra: Record<string, unknown> = {}): V1ContainerStatus {
  return {
    name,
    image: 'x',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: {
      terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: T0 as never, finishedAt: T1 as never, ...extra },
    },
  };
}
function running(name: string): V1ContainerStatus {
  return { name, image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: T0 as never } } };
}

function pod(status: V1Pod['status'], deleting = false): V1Pod {
  return {
    metadata: { name: 'wf-p', labels: { 'workflows.plugflow.io/node-id': 'n1' }, ...(deleting ? { deletionTimestamp: new Date(T2) } : {}) },
    status: { startTime: new Date(T0), ...status },
  };
}

const okReport = encodeWaitReport({ exitCode: 0, result: 'hello\n', parameters: [{ name: 'p', value: '42' }] });

describe('observePod', () => {
  it('reports a succeeded step with result, exit code and parameters', () => {
    const obs = observePod(
      pod({
        phase: 'Succeeded',
        containerStatuses: [terminated('main', 0), terminated('wait', 0, { message: okReport, finishedAt: T2 }), terminated('side', 0)],
      }),
    );
    expect(obs).toEqual({
      podName: 'wf-p',
      nodeId: 'n1',
      labels: { 'workflows.plugflow.io/node-id': 'n1' },
      phase: 'Succeeded',
      startedAt: T0,
      finishedAt: T2,
      outputs: { exitCode: '0', result: 'hello\n', parameters: [{ name: 'p', value: '42' }] },
    });
  });

  it('is final as soon as main and wait terminated, whatever the sidecars do', () => {
    const obs = observePod(
      pod({ phase: 'Running', containerStatuses: [terminated('main', 0), terminated('wait', 0, { message: okReport }), running('side')] }),
    );
    expect(obs.phase).toBe('Succeeded');
  });

  it('waits for the wait container after main finished', () => {
    expect(observePod(pod({ phase: 'Running', containerStatuses: [terminated('main', 0), running('wait')] })).phase).toBe('Running');
  });

  it('fails a step whose main container could not start, and says the pod still runs (its wait container would wait forever)', () => {
    const obs = observePod(
      pod({
        phase: 'Running',
        containerStatuses: [
          terminated('main', 128, { reason: 'StartError', message: 'failed to create containerd task: context deadline exceeded' }),
          running('wait'),
        ],
      }),
    );
    expect(obs).toMatchObject({
      phase: 'Failed',
      message:
        'the main container could not start: StartError (exit code 128): failed to create containerd task: context deadline exceeded',
      containersRunning: true,
      finishedAt: T1,
    });
    // An ordinary failure of main is not that: the wait container still reports it.
    expect(observePod(pod({ phase: 'Running', containerStatuses: [terminated('main', 1), running('wait')] })).phase).toBe('Running');
  });

  it('names the container a running pod waits on when it will not start by itself', () => {
    const waiting: V1ContainerStatus = {
      name: 'main',
      image: 'x',
      imageID: '',
      ready: false,
      restartCount: 0,
      state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"' } },
    };
    expect(observePod(pod({ phase: 'Running', containerStatuses: [waiting, running('wait')] }))).toMatchObject({
      phase: 'Running',
      message: 'main: ImagePullBackOff: Back-off pulling image "nope:1"',
    });
  });

  it('fails with the exit code and reason of the main container', () => {
    const report = encodeWaitReport({ exitCode: 3, result: 'partial', parameters: [] });
    const obs = observePod(
      pod({ phase: 'Failed', containerStatuses: [terminated('main', 3), terminated('wait', 0, { message: report })] }),
    );
    expect(obs).toMatchObject({ phase: 'Failed', message: 'Error (exit code 3)', outputs: { exitCode: '3', result: 'partial' } });
    const oom = observePod(
      pod({ phase: 'Failed', containerStatuses: [terminated('main', 137, { reason: 'OOMKilled' }), terminated('wait', 1)] }),
    );
    expect(oom).toMatchObject({ phase: 'Failed', message: 'OOMKilled (exit code 137)', outputs: { exitCode: '137' } });
  });

  it('fails when the wait container reports an error or cannot report', () => {
    const report = encodeWaitReport({ exitCode: 0, parameters: [], error: 'output parameter "p": /tmp/p: no such file' });
    expect(
      observePod(pod({ phase: 'Failed', containerStatuses: [terminated('main', 0), terminated('wait', 1, { message: report })] })),
    ).toMatchObject({
      phase: 'Failed',
      message: 'output parameter "p": /tmp/p: no such file',
    });
    expect(
      observePod(pod({ phase: 'Failed', containerStatuses: [terminated('main', 0), terminated('wait', 0, { message: 'garbage' })] }))
        .message,
    ).toMatch(/not JSON/);
    expect(observePod(pod({ phase: 'Failed', containerStatuses: [terminated('main', 0), terminated('wait', 2)] })).message).toBe(
      'the wait container failed to collect the outputs: Error (exit code 2)',
    );
  });

  it('says when the result was shortened', () => {
    const report = encodeWaitReport({ exitCode: 0, result: 'y'.repeat(9000), parameters: [] });
    const obs = observePod(
      pod({ phase: 'Succeeded', containerStatuses: [terminated('main', 0), terminated('wait', 0, { message: report })] }),
    );
    expect(obs.phase).toBe('Succeeded');
    expect(obs.message).toMatch(/shortened from 9000 to \d+ bytes/);
  });

  it('reports init container failures and pod-level failures', () => {
    const init = observePod(
      pod({ phase: 'Failed', initContainerStatuses: [terminated('init', 0), terminated('prep', 2)], containerStatuses: [] }),
    );
    expect(init).toMatchObject({ phase: 'Failed', message: 'init container prep: Error (exit code 2)' });
    const evicted = observePod(
      pod({ phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' }),
    );
    expect(evicted).toMatchObject({
      phase: 'Failed',
      message: 'DeadlineExceeded: Pod was active on the node longer than the specified deadline',
    });
  });

  it('reports pending, running and deleted pods', () => {
    expect(observePod(pod({ phase: 'Pending' }))).toEqual({
      podName: 'wf-p',
      nodeId: 'n1',
      labels: { 'workflows.plugflow.io/node-id': 'n1' },
      phase: 'Pending',
      startedAt: T0,
    });
    const stuck = observePod(
      pod({
        phase: 'Pending',
        containerStatuses: [
          {
            name: 'main',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ErrImagePull', message: 'not found' } },
          },
        ],
      }),
    );
    expect(stuck.message).toBe('main: ErrImagePull: not found');
    const unsched = observePod(
      pod({
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available' }],
      }),
    );
    expect(unsched.message).toBe('0/1 nodes are available');
    expect(observePod(pod({ phase: 'Running', containerStatuses: [running('main'), running('wait')] })).phase).toBe('Running');
    expect(observePod(pod({ phase: 'Running', containerStatuses: [running('main')] }, true))).toMatchObject({
      phase: 'Deleted',
      message: expect.stringMatching(/deleted/),
    });
  });
});

describe('observePod of a containerSet pod', () => {
  const setPod = (names: string[], status: V1Pod['status']): V1Pod => {
    const p = pod(status);
    p.metadata!.annotations = { 'workflows.plugflow.io/container-set': JSON.stringify(names) };
    return p;
  };
  const noMain = encodeWaitReport({ exitCode: 0, parameters: [] });

  it('names the container of the set that failed, not main which then did not run', () => {
    const obs = observePod(
      setPod(['a', 'main'], {
        phase: 'Failed',
        containerStatuses: [terminated('a', 4), terminated('main', 1), terminated('wait', 0, { message: okReport })],
      }),
    );
    expect(obs).toMatchObject({ phase: 'Failed', message: 'container a: Error (exit code 4)' });
  });

  it('is not final while a container of the set still runs after main', () => {
    const obs = observePod(
      setPod(['a', 'main'], {
        phase: 'Running',
        containerStatuses: [running('a'), terminated('main', 0), terminated('wait', 0, { message: okReport })],
      }),
    );
    expect(obs.phase).toBe('Running');
  });

  it('ends a set without main when all of its containers have', () => {
    const running1 = observePod(
      setPod(['a', 'b'], {
        phase: 'Running',
        containerStatuses: [terminated('a', 0), running('b'), terminated('wait', 0, { message: noMain })],
      }),
    );
    expect(running1.phase).toBe('Running');
    const done = observePod(
      setPod(['a', 'b'], {
        phase: 'Succeeded',
        containerStatuses: [terminated('a', 0), terminated('b', 0), terminated('wait', 0, { message: noMain })],
      }),
    );
    expect(done).toMatchObject({ phase: 'Succeeded', outputs: { exitCode: '0' } });
    const failed = observePod(
      setPod(['a', 'b'], {
        phase: 'Failed',
        containerStatuses: [terminated('a', 0), terminated('b', 2), terminated('wait', 0, { message: noMain })],
      }),
    );
    expect(failed).toMatchObject({ phase: 'Failed', message: 'container b: Error (exit code 2)', outputs: { exitCode: '2' } });
  });
});

describe('observePod: the containers of a set', () => {
  it('reports each container, telling a skipped one (its termination message) from a done one', () => {
    const p = pod({
      phase: 'Failed',
      containerStatuses: [
        terminated('a', 3),
        terminated('b', 0, { message: 'skipped: dependency a failed (exit code 3)' }),
        terminated('c', 0),
        running('d'),
        terminated('wait', 0, { message: encodeWaitReport({ exitCode: 0, parameters: [] }) }),
      ],
    });
    p.metadata!.annotations = { 'workflows.plugflow.io/container-set': '["a","b","c","d","e"]' };
    expect(observePod(p).containers).toEqual([
      { name: 'a', phase: 'Failed', message: 'Error (exit code 3)', startedAt: T0, finishedAt: T1 },
      { name: 'b', phase: 'Skipped', message: 'skipped: dependency a failed (exit code 3)', startedAt: T0, finishedAt: T1 },
      { name: 'c', phase: 'Succeeded', startedAt: T0, finishedAt: T1 },
      { name: 'd', phase: 'Running', startedAt: T0 },
      { name: 'e', phase: 'Pending' },
    ]);
  });
});
