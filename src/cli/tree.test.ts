import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../api/index.js';
import { formatDuration, renderTree } from './tree.js';

function node(n: Partial<NodeStatus> & Pick<NodeStatus, 'id' | 'type' | 'phase'>): NodeStatus {
  return { name: n.id, displayName: n.id, ...n };
}

describe('renderTree', () => {
  it('shows steps under their parent, lifting group nodes, with phase, pod, duration and message', () => {
    const nodes = Object.fromEntries(
      [
        node({
          id: 'wf',
          name: 'wf',
          type: 'Steps',
          phase: 'Failed',
          children: ['g0'],
          templateName: 'main',
          startedAt: '2026-01-01T00:00:00Z',
          finishedAt: '2026-01-01T00:01:05Z',
        }),
        node({ id: 'g0', type: 'StepGroup', phase: 'Failed', children: ['a', 'b'] }),
        node({
          id: 'a',
          displayName: 'left',
          type: 'Pod',
          phase: 'Succeeded',
          templateName: 'say',
          podName: 'wf-a',
          startedAt: '2026-01-01T00:00:00Z',
          finishedAt: '2026-01-01T00:00:03Z',
        }),
        node({ id: 'b', displayName: 'right', type: 'Pod', phase: 'Failed', templateName: 'say', podName: 'wf-b', message: 'exit code 3' }),
        node({ id: 'x', name: 'wf.onExit', type: 'Pod', phase: 'Succeeded', templateName: 'report', startedAt: '2026-01-01T00:01:00Z' }),
      ].map((n) => [n.id, n]),
    );
    const text = renderTree({
      metadata: { name: 'wf', namespace: 'ns' },
      status: { phase: 'Failed', nodes, startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:01:05Z' },
    });
    const lines = text.split('\n');
    expect(lines.slice(0, 4)).toEqual(['Name:      wf', 'Namespace: ns', 'Status:    Failed', 'Duration:  1m05s']);
    const body = lines.slice(lines.indexOf('') + 1);
    expect(body[0]).toMatch(/^STEP\s+TEMPLATE\s+PODNAME\s+DURATION\s+MESSAGE$/);
    expect(body[1]).toMatch(/^✖ wf\s+main\s+1m05s$/);
    expect(body[2]).toMatch(/^├─ ✔ left\s+say\s+wf-a\s+3s$/);
    expect(body[3]).toMatch(/^└─ ✖ right\s+say\s+wf-b\s+exit code 3$/);
    expect(body[4]).toMatch(/^✔ wf\.onExit\s+report/);
    expect(text).not.toContain('g0');
  });

  it('says so when there are no nodes yet', () => {
    expect(renderTree({ metadata: { name: 'w' } })).toContain('(no steps yet)');
  });

  it('formats durations the way people read them', () => {
    expect([formatDuration(850), formatDuration(42_000), formatDuration(185_000), formatDuration(3_720_000)]).toEqual([
      '850ms',
      '42s',
      '3m05s',
      '1h02m',
    ]);
  });
});
