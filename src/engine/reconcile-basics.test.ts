import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { reconcileWorkflow } from './reconcile.js';
import { World } from './test-world.js';
import { fnv1a32 } from './node-naming.js';

const echo: Template = { name: 'echo', container: { image: 'alpine', command: ['echo', 'hi'] } };

function twoSteps(): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [{ name: 'main', steps: [[{ name: 'a', template: 'echo' }], [{ name: 'b', template: 'echo' }]] }, echo],
  };
}

describe('reconcile basics', () => {
  it('runs a single container template to success', () => {
    const w = new World({ entrypoint: 'echo', templates: [echo] });
    const r = w.reconcile();
    expect(r.status.phase).toBe('Running');
    expect(r.actions).toEqual([{ kind: 'createPod', nodeId: 'wf', podName: `wf-echo-${fnv1a32('wf')}`, template: echo, nodeName: 'wf' }]);
    expect(w.node('wf')).toMatchObject({ type: 'Pod', phase: 'Pending', templateName: 'echo' });
    w.startPod('wf');
    w.reconcile();
    expect(w.node('wf').phase).toBe('Running');
    w.succeedPod('wf', { result: 'hi' });
    const done = w.reconcile();
    expect(done.status).toMatchObject({ phase: 'Succeeded', startedAt: '2024-01-01T00:00:00.000Z', progress: '1/1' });
    expect(done.status.finishedAt).toBe('2024-01-01T00:00:00.000Z');
    expect(w.node('wf').outputs).toEqual({ result: 'hi', exitCode: '0' });
    expect(done.actions).toEqual([]);
  });

  it('is deterministic: the same inputs give the same status and actions', () => {
    const w = new World(twoSteps());
    w.reconcile();
    w.succeedPod('a');
    const input = structuredClone(w.workflow);
    const obs = { pods: [...w.pods.values()], tasks: [], now: '2024-01-01T00:00:05Z', pluginsEnabled: true };
    const one = reconcileWorkflow(structuredClone(input), structuredClone(obs));
    const two = reconcileWorkflow(structuredClone(input), structuredClone(obs));
    expect(two).toEqual(one);
    expect(one.actions.map((a) => a.kind)).toEqual(['createPod']);
  });

  it('asks again for a pod it created until the pod is observed, without duplicating the node', () => {
    const w = new World(twoSteps());
    const first = w.reconcile();
    // The controller crashed before creating the pod: the pod is not observed.
    w.pods.clear();
    const second = w.reconcile();
    expect(second.actions).toEqual(first.actions);
    expect(Object.keys(second.status.nodes ?? {})).toHaveLength(3);
  });

  it('survives a controller restart: the persisted status is all it needs', () => {
    const w = new World(twoSteps());
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    w.reconcile();
    // A new controller reads the stored workflow and lists pods; nothing is created twice.
    const restarted = reconcileWorkflow(structuredClone(w.workflow), {
      pods: [...w.pods.values()],
      tasks: [],
      now: new Date(w.nowMs).toISOString(),
      pluginsEnabled: true,
    });
    expect(restarted.actions).toEqual([]);
    expect(restarted.status.nodes).toEqual(w.status.nodes);
  });

  it('names nodes like the peer system and links children and boundaries', () => {
    const w = new World(twoSteps());
    w.reconcile();
    w.succeedPod('a');
    w.reconcile();
    const root = w.node('wf');
    const g0 = w.node('wf[0]');
    const a = w.node('wf[0].a');
    const b = w.node('wf[1].b');
    expect(root.children).toEqual([g0.id, w.node('wf[1]').id]);
    expect(g0.children).toEqual([a.id]);
    expect(a).toMatchObject({ displayName: 'a', boundaryID: 'wf', type: 'Pod' });
    expect(b.id).toBe(`wf-${fnv1a32('wf[1].b')}`);
    expect(g0.displayName).toBe('[0]');
  });

  it('reports a pod deleted under a running node as an Error, whether told or noticed', () => {
    const told = new World({ entrypoint: 'echo', templates: [echo] });
    told.reconcile();
    told.pod('wf').phase = 'Deleted';
    told.reconcile();
    expect(told.status).toMatchObject({ phase: 'Error', message: 'pod deleted' });

    const noticed = new World({ entrypoint: 'echo', templates: [echo] });
    noticed.reconcile();
    noticed.startPod('wf');
    noticed.reconcile();
    noticed.removePod('wf');
    noticed.reconcile();
    expect(noticed.node('wf')).toMatchObject({ phase: 'Error', message: 'pod deleted' });
    expect(noticed.status.phase).toBe('Error');
  });

  it('fails a pod node with the pod message and exit code', () => {
    const w = new World({ entrypoint: 'echo', templates: [echo] });
    w.reconcile();
    w.failPod('wf', 'OOMKilled', '137');
    w.reconcile();
    expect(w.node('wf')).toMatchObject({ phase: 'Failed', message: 'OOMKilled', outputs: { exitCode: '137' } });
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'OOMKilled' });
  });

  it('keeps at most spec.parallelism pods running', () => {
    const w = new World({
      entrypoint: 'main',
      parallelism: 2,
      templates: [{ name: 'main', steps: [[{ name: 'x', template: 'echo', withItems: [1, 2, 3, 4, 5] }]] }, echo],
    });
    w.reconcile();
    expect(w.runningPods()).toEqual(['x(0:1)', 'x(1:2)']);
    w.succeedPod('x(0:1)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['x(1:2)', 'x(2:3)']);
    w.succeedAll();
    w.reconcile();
    w.succeedAll();
    w.reconcile();
    expect(w.runningPods()).toEqual([]);
    expect(w.status.phase).toBe('Succeeded');
    expect(w.created.size).toBe(5);
  });

  it('pauses new work while spec.suspend is true and goes on when it is cleared', () => {
    const w = new World({ ...twoSteps(), suspend: true });
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Running', message: expect.stringContaining('suspended') });
    expect(w.created.size).toBe(0);
    w.workflow.spec.suspend = false;
    w.reconcile();
    expect(w.runningPods()).toEqual(['a']);
  });

  it('cleans up after completion: stray running pods are deleted', () => {
    const w = new World({ entrypoint: 'echo', templates: [echo] });
    w.reconcile();
    w.succeedPod('wf');
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    // A pod of this workflow that still runs (e.g. left over) is removed on a later reconcile.
    w.pods.set('stray', { podName: 'stray', nodeId: 'wf-1', phase: 'Running' });
    const r = w.reconcile();
    expect(r.actions).toEqual([{ kind: 'deletePod', podName: 'stray', nodeId: 'wf-1', reason: 'workflow completed' }]);
    expect(r.status).toEqual(w.status);
  });

  it('fails a step whose main container could not start and stops its pod, which would otherwise run on', () => {
    const w = new World(twoSteps());
    w.reconcile();
    w.startPod('a');
    const pod = w.pod('a');
    Object.assign(pod, {
      phase: 'Failed',
      message: 'the main container could not start: StartError (exit code 128)',
      containersRunning: true,
    });
    const r = w.reconcile();
    expect(w.node('a')).toMatchObject({ phase: 'Failed', message: 'the main container could not start: StartError (exit code 128)' });
    expect(r.status.phase).toBe('Failed');
    expect(r.actions).toContainEqual({ kind: 'deletePod', podName: pod.podName, nodeId: pod.nodeId, reason: 'workflow completed' });
  });

  it('rejects an observation time that is not a time', () => {
    expect(() =>
      reconcileWorkflow(
        { metadata: { name: 'wf' }, spec: { entrypoint: 'echo', templates: [echo] } },
        { pods: [], tasks: [], now: 'yesterday', pluginsEnabled: true },
      ),
    ).toThrow(/observations.now is not an ISO-8601 time/);
  });
});
