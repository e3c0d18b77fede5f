import { describe, expect, it } from 'vitest';
import type { Template, WorkflowSpec } from '../api/index.js';
import { World } from './test-world.js';

const sleep: Template = { name: 'sleep', container: { image: 'alpine', command: ['sleep', '1000'] } };

function parallel(extra: Partial<WorkflowSpec> = {}, leaf: Template = sleep): WorkflowSpec {
  return {
    entrypoint: 'main',
    templates: [
      {
        name: 'main',
        steps: [
          [
            { name: 'a', template: leaf.name },
            { name: 'b', template: leaf.name },
          ],
          [{ name: 'c', template: leaf.name }],
        ],
      },
      leaf,
    ],
    ...extra,
  };
}

describe('deadlines, timeouts and shutdown', () => {
  it('fails the workflow at activeDeadlineSeconds and deletes its running pods', () => {
    const w = new World(parallel({ activeDeadlineSeconds: 300 }));
    w.reconcile();
    expect(w.requeueAt).toBe('2024-01-01T00:05:00.000Z');
    w.startPod('a');
    w.succeedPod('b');
    w.advance(299);
    w.reconcile();
    expect(w.status.phase).toBe('Running');
    const podA = w.pod('a').podName;
    w.advance(1);
    const r = w.reconcile();
    expect(r.actions).toContainEqual(expect.objectContaining({ kind: 'deletePod', podName: podA }));
    expect(w.deleted).toEqual([podA]);
    expect(w.node('a')).toMatchObject({ phase: 'Failed', message: 'Workflow exceeded its deadline (spec.activeDeadlineSeconds 300)' });
    expect(w.node('b').phase).toBe('Succeeded');
    expect(w.nodesNamed('c')).toHaveLength(0);
    expect(w.status).toMatchObject({
      phase: 'Failed',
      message: 'Workflow exceeded its deadline (spec.activeDeadlineSeconds 300)',
      finishedAt: '2024-01-01T00:05:00.000Z',
    });
    expect(r.actions.some((a) => a.kind === 'requeueAt')).toBe(false);
  });

  it('fails a node at its template activeDeadlineSeconds, counted per attempt', () => {
    const w = new World(parallel({}, { ...sleep, activeDeadlineSeconds: 10, retryStrategy: { limit: 1, retryPolicy: 'Always' } }));
    w.reconcile();
    w.advance(10);
    w.reconcile();
    expect(w.node('a(0)')).toMatchObject({ phase: 'Failed', message: 'Step exceeded its deadline (activeDeadlineSeconds 10)' });
    // The retry starts at once and gets its own 10 seconds.
    expect(w.runningPods()).toEqual(['a(1)', 'b(1)']);
    w.advance(9);
    w.reconcile();
    expect(w.runningPods()).toEqual(['a(1)', 'b(1)']);
  });

  it('counts timeout from the first attempt, so retries cannot extend it', () => {
    const w = new World({ entrypoint: 'slow', templates: [{ ...sleep, name: 'slow', timeout: '1m', retryStrategy: { limit: 5 } }] });
    w.reconcile();
    w.advance(40);
    w.failPod('wf(0)');
    w.reconcile();
    expect(w.runningPods()).toEqual(['wf(1)']);
    expect(w.requeueAt).toBe('2024-01-01T00:01:00.000Z');
    w.advance(20);
    w.reconcile();
    expect(w.node('wf(1)')).toMatchObject({ phase: 'Failed', message: 'Step exceeded its timeout of 1m' });
    expect(w.deleted).toHaveLength(1);
    // No attempt starts after the timeout: the retry node ends with it.
    expect(w.node('wf')).toMatchObject({ type: 'Retry', phase: 'Failed', message: 'Step exceeded its timeout of 1m' });
    expect(w.created.size).toBe(2);
    expect(w.status.phase).toBe('Failed');
  });

  it('stops with spec.shutdown Stop: running pods end, the exit handler still runs', () => {
    const w = new World({
      ...parallel(),
      onExit: 'cleanup',
      templates: [...parallel().templates!, { name: 'cleanup', container: { image: 'alpine' } }],
    });
    w.reconcile();
    w.startPod('a');
    w.startPod('b');
    w.reconcile();
    w.workflow.spec.shutdown = 'Stop';
    w.reconcile();
    expect(w.node('a')).toMatchObject({ phase: 'Failed', message: 'Stopped with strategy "Stop"' });
    expect(w.runningPods()).toEqual(['onExit']);
    w.succeedPod('onExit');
    w.reconcile();
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'Stopped with strategy "Stop"' });
  });

  it('terminates with spec.shutdown Terminate: no exit handler', () => {
    const w = new World({
      ...parallel(),
      onExit: 'cleanup',
      templates: [...parallel().templates!, { name: 'cleanup', container: { image: 'alpine' } }],
    });
    w.reconcile();
    w.workflow.spec.shutdown = 'Terminate';
    w.reconcile();
    expect(w.runningPods()).toEqual([]);
    expect(w.nodesNamed('onExit')).toHaveLength(0);
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'Stopped with strategy "Terminate"' });
  });

  it('terminates a workflow that never started', () => {
    const w = new World({ ...parallel(), shutdown: 'Terminate' });
    w.reconcile();
    expect(w.created.size).toBe(0);
    expect(w.status).toMatchObject({ phase: 'Failed', message: 'Stopped with strategy "Terminate"' });
  });
});
