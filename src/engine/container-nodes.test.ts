import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { retryWorkflow } from './retry-workflow.js';
import { World } from './test-world.js';

const spec: WorkflowSpec = {
  entrypoint: 'main',
  templates: [
    { name: 'main', steps: [[{ name: 'set', template: 'set' }]] },
    {
      name: 'set',
      containerSet: {
        containers: [
          { name: 'a', image: 'alpine', command: ['true'] },
          { name: 'b', image: 'alpine', command: ['true'], dependencies: ['a'] },
          { name: 'main', image: 'alpine', command: ['true'], dependencies: ['b'] },
        ],
      },
    },
  ],
};

describe('containerSet container nodes', () => {
  it('gives each container a child node that follows its container', () => {
    const w = new World(spec);
    w.reconcile();
    const pod = w.node('set');
    expect(pod.type).toBe('Pod');
    const children = () => (w.node('set').children ?? []).map((id) => w.status.nodes![id]!);
    expect(children().map((c) => [c.displayName, c.type, c.phase])).toEqual([
      ['a', 'Container', 'Pending'],
      ['b', 'Container', 'Pending'],
      ['main', 'Container', 'Pending'],
    ]);
    w.startPod('set');
    w.pod('set').containers = [
      { name: 'a', phase: 'Succeeded', startedAt: '2024-01-01T00:00:01.000Z', finishedAt: '2024-01-01T00:00:02.000Z' },
      { name: 'b', phase: 'Running', startedAt: '2024-01-01T00:00:01.000Z' },
      { name: 'main', phase: 'Running' },
    ];
    w.reconcile();
    expect(children().map((c) => c.phase)).toEqual(['Succeeded', 'Running', 'Running']);
    expect(children()[0]).toMatchObject({ startedAt: '2024-01-01T00:00:01.000Z', finishedAt: '2024-01-01T00:00:02.000Z' });

    w.failPod('set', 'container b: Error (exit code 3)', '1');
    w.pod('set').containers = [
      { name: 'a', phase: 'Succeeded' },
      { name: 'b', phase: 'Failed', message: 'Error (exit code 3)' },
      { name: 'main', phase: 'Skipped', message: 'skipped: dependency b failed (exit code 3)' },
    ];
    w.reconcile();
    expect(children().map((c) => [c.displayName, c.phase, c.message])).toEqual([
      ['a', 'Succeeded', undefined],
      ['b', 'Failed', 'Error (exit code 3)'],
      ['main', 'Skipped', 'skipped: dependency b failed (exit code 3)'],
    ]);
    expect(w.node('set')).toMatchObject({ phase: 'Failed', message: 'container b: Error (exit code 3)' });
    expect(w.status.phase).toBe('Failed');
    // Progress counts the step once, not its containers.
    expect(w.status.progress).toBe('0/1');
  });

  it('ends containers that never finished with their pod node', () => {
    const w = new World(spec);
    w.reconcile();
    w.startPod('set');
    w.reconcile();
    w.removePod('set');
    w.reconcile();
    const kids = (w.node('set').children ?? []).map((id) => w.status.nodes![id]!);
    expect(w.node('set').phase).toBe('Error');
    expect(kids.every((k) => k.phase === 'Error')).toBe(true);
  });

  it('a workflow retry runs the set again with fresh container nodes, and names only the step', () => {
    const w = new World(spec);
    w.reconcile();
    w.failPod('set');
    w.pod('set').containers = [
      { name: 'a', phase: 'Succeeded' },
      { name: 'b', phase: 'Failed' },
      { name: 'main', phase: 'Skipped' },
    ];
    w.reconcile();
    expect(w.status.phase).toBe('Failed');
    const retried = retryWorkflow('wf', 'wf', w.status, {});
    expect(retried.rerun).toEqual(['set']);
    expect(Object.values(retried.status.nodes!).filter((n) => n.type === 'Container')).toEqual([]);
  });
});
