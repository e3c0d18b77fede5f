import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../api/index.js';
import { updateProgress } from './progress.js';

const node = (id: string, type: NodeStatus['type'], phase: NodeStatus['phase'], extra: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: id,
  displayName: id,
  type,
  phase,
  ...extra,
});

describe('updateProgress', () => {
  // A DAG `job → report` where job is a plugin task that reported 3/3: the DAG links report as
  // job's child, which must not be counted into job's own progress.
  const dag = () => ({
    wf: node('wf', 'DAG', 'Running', { children: ['job'] }),
    job: node('job', 'Plugin', 'Succeeded', { progress: '3/3', children: ['report'] }),
    report: node('report', 'Pod', 'Running'),
  });

  it('keeps a work node at its own progress and sums work under composite nodes', () => {
    const nodes = dag();
    expect(updateProgress(nodes)).toBe('3/4');
    expect(nodes.job.progress).toBe('3/3');
    expect(nodes.report.progress).toBe('0/1');
    expect(nodes.wf.progress).toBe('3/4');
  });

  it('is stable across reconciles (the written progress is read back unchanged)', () => {
    const nodes = dag();
    for (let i = 0; i < 3; i++) expect(updateProgress(nodes)).toBe('3/4');
    nodes.report.phase = 'Succeeded';
    for (let i = 0; i < 3; i++) expect(updateProgress(nodes)).toBe('4/4');
    expect(nodes.job.progress).toBe('3/3');
  });

  it('counts a Succeeded task as complete, whatever it last reported', () => {
    const nodes = { t: node('t', 'Plugin', 'Running') };
    expect(updateProgress(nodes)).toBe('0/1');
    nodes.t.phase = 'Succeeded';
    expect(updateProgress(nodes)).toBe('1/1');
    const partial = { t: node('t', 'Plugin', 'Succeeded', { progress: '2/5' }) };
    expect(updateProgress(partial)).toBe('5/5');
  });
});

describe('a workflow without work (pod-less steps)', () => {
  it('has progress 0/0, so a workflow that ended in one reconcile still says how far it got', () => {
    const nodes = {
      wf: node('wf', 'Steps', 'Succeeded', { children: ['wait'] }),
      wait: node('wait', 'Suspend', 'Succeeded'),
    };
    expect(updateProgress(nodes)).toBe('0/0');
    expect(nodes.wf.progress).toBeUndefined();
  });
});

describe('the one-walk sums of a tree and the per-node sums of a shared graph', () => {
  it('agree: a task two others depend on is counted once, and a tree sums as its levels do', () => {
    // Diamond: a → b, a → c, b → d, c → d (d has two parents: the per-node path).
    const diamond = {
      dag: node('dag', 'DAG', 'Running', { children: ['a'] }),
      a: node('a', 'Pod', 'Succeeded', { children: ['b', 'c'] }),
      b: node('b', 'Pod', 'Succeeded', { children: ['d'] }),
      c: node('c', 'Pod', 'Running', { children: ['d'] }),
      d: node('d', 'Pod', 'Pending'),
    };
    expect(updateProgress(diamond)).toBe('2/4');
    expect(diamond.dag.progress).toBe('2/4');
    // The same nodes as a tree (d under b only): the one walk gives what the per-node sums would.
    const tree = {
      wf: node('wf', 'Steps', 'Running', { children: ['g1', 'g2'] }),
      g1: node('g1', 'StepGroup', 'Succeeded', { children: ['a', 'b'] }),
      a: node('a', 'Pod', 'Succeeded'),
      b: node('b', 'Pod', 'Succeeded'),
      g2: node('g2', 'StepGroup', 'Running', { children: ['inner'] }),
      inner: node('inner', 'Steps', 'Running', { children: ['c', 'd'] }),
      c: node('c', 'Pod', 'Running'),
      d: node('d', 'Plugin', 'Running', { progress: '1/4' }),
    };
    expect(updateProgress(tree)).toBe('3/7');
    expect([tree.wf, tree.g1, tree.g2, tree.inner].map((n) => n.progress)).toEqual(['3/7', '2/2', '1/5', '1/5']);
  });
});
