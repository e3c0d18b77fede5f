import { describe, expect, it } from 'vitest';
import { cut, filterLines, logPods } from './workflow-logs.js';
import type { NodeStatus, Workflow } from './types.js';

const node = (id: string, startedAt: string, phase: NodeStatus['phase'], podName?: string): NodeStatus => ({
  id,
  name: `wf.${id}`,
  displayName: id,
  type: podName ? 'Pod' : 'Steps',
  phase,
  startedAt,
  ...(podName ? { podName } : {}),
});

const wf = (nodes: NodeStatus[]): Workflow => ({
  metadata: { name: 'wf', namespace: 'ns' },
  status: { nodes: Object.fromEntries(nodes.map((n) => [n.id, n])) },
});

describe('which pods the workflow log reads', () => {
  it('every pod once, in the order their nodes started, the running ones followed', () => {
    const { pods, total } = logPods(
      wf([
        node('b', '2024-01-01T00:00:02Z', 'Running', 'p-b'),
        node('root', '2024-01-01T00:00:00Z', 'Running'),
        node('a', '2024-01-01T00:00:01Z', 'Failed', 'p-a'),
      ]),
    );
    expect(total).toBe(2);
    expect(pods).toEqual([
      { pod: 'p-a', container: 'main', node: 'a', running: false },
      { pod: 'p-b', container: 'main', node: 'b', running: true },
    ]);
  });

  it('at most `max` of them, and says how many there are', () => {
    const many = Array.from({ length: 50 }, (_, i) =>
      node(`n${i}`, `2024-01-01T00:00:${String(i).padStart(2, '0')}Z`, 'Succeeded', `p${i}`),
    );
    const { pods, total } = logPods(wf(many), 30);
    expect(pods).toHaveLength(30);
    expect(total).toBe(50);
    expect(pods[29]!.pod).toBe('p29');
  });
});

describe('filtering the lines', () => {
  const lines = [
    { node: 'fetch', text: 'fetched 3 files' },
    { node: 'crunch', text: 'Crunching FAILED: boom' },
    { node: 'crunch', text: 'retrying' },
  ];

  it('cuts a line at every match, any case', () => {
    expect(cut('a Boom and boom', 'boom')).toEqual(['a ', 'Boom', ' and ', 'boom', '']);
    expect(cut('nothing', 'x')).toEqual(['nothing']);
    expect(cut('all', '')).toEqual(['all']);
  });

  it('keeps only the matching lines (in the text or the node name), or all of them with the matches marked', () => {
    expect(filterLines(lines, 'failed', true)).toEqual({
      shown: [{ node: 'crunch', text: 'Crunching FAILED: boom', pieces: ['Crunching ', 'FAILED', ': boom'] }],
      matches: 1,
    });
    expect(filterLines(lines, 'crunch', true).shown.map((l) => l.text)).toEqual(['Crunching FAILED: boom', 'retrying']);
    const all = filterLines(lines, 'failed', false);
    expect(all.shown).toHaveLength(3);
    expect(all.matches).toBe(1);
    expect(filterLines(lines, '  ', true).shown).toHaveLength(3);
  });
});
