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
