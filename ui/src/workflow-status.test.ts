import { describe, expect, it } from 'vitest';
import type { NodeStatus, Workflow } from './types.js';
import { elapsed } from './format.js';
import { progressOf, timesOf } from './workflow-status.js';

const n = (id: string, type: NodeStatus['type'], phase: NodeStatus['phase'], startedAt?: string, finishedAt?: string): NodeStatus => ({
  id,
  name: id,
  displayName: id,
  type,
  phase,
  startedAt,
  finishedAt,
});

/** A workflow without pods: a suspend of two seconds, then a skipped step. */
const podless = (status: Workflow['status']): Workflow => ({ metadata: { name: 'p', namespace: 'n' }, status });
const nodes = {
  p: n('p', 'Steps', 'Succeeded', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z'),
  g0: n('g0', 'StepGroup', 'Succeeded', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z'),
  wait: n('wait', 'Suspend', 'Succeeded', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z'),
  skip: n('skip', 'Skipped', 'Skipped', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z'),
};

describe("a workflow's progress and times", () => {
  it("shows the controller's progress when there is one", () => {
    expect(progressOf(podless({ progress: '3/4', nodes }))).toBe('3/4');
  });

  it('counts the steps of the nodes when there is none (no pods): composite and skipped nodes left out', () => {
    expect(progressOf(podless({ phase: 'Succeeded', nodes }))).toBe('1/1');
    expect(progressOf(podless({ phase: 'Running', nodes: { ...nodes, wait: { ...nodes.wait, phase: 'Running' } } }))).toBe('0/1');
    expect(progressOf(podless({}))).toBe('');
  });

  it('takes the times from the nodes when the workflow has none of its own', () => {
    const t = timesOf(podless({ phase: 'Succeeded', nodes }));
    expect(t).toEqual({ startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:02Z' });
    expect(elapsed(t.startedAt, t.finishedAt)).toBe('2s');
    // Still running: no end, the duration runs to now.
    expect(timesOf(podless({ phase: 'Running', nodes: { wait: { ...nodes.wait, finishedAt: undefined } } }))).toEqual({
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: undefined,
    });
  });

  it("keeps the workflow's own times when it has them", () => {
    const own = { startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:05Z' };
    expect(timesOf(podless({ phase: 'Succeeded', ...own, nodes }))).toEqual(own);
  });
});
