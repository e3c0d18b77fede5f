import { describe, expect, it } from 'vitest';
import { filterAndSort, visibleRange } from './list-model.js';
import type { Workflow } from './types.js';

const wf = (name: string, phase: string, created: string, started?: string, finished?: string): Workflow => ({
  metadata: { name, namespace: name.startsWith('x') ? 'b' : 'a', creationTimestamp: created },
  status: { phase: phase as never, startedAt: started, finishedAt: finished },
});

const all = [
  wf('alpha', 'Succeeded', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:11Z'),
  wf('beta', 'Failed', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:04Z'),
  wf('xgamma', 'Running', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z'),
];

describe('the workflow list', () => {
  it('shows the newest first by default', () => {
    expect(filterAndSort(all, { sort: 'created', descending: true }).map((w) => w.metadata.name)).toEqual(['beta', 'xgamma', 'alpha']);
  });

  it('filters by phase and by part of the name in any case', () => {
    expect(filterAndSort(all, { sort: 'name', descending: false, phase: 'Failed' }).map((w) => w.metadata.name)).toEqual(['beta']);
    expect(filterAndSort(all, { sort: 'name', descending: false, name: 'GAM' }).map((w) => w.metadata.name)).toEqual(['xgamma']);
  });

  it('sorts by duration, a running workflow counting up to now', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    expect(filterAndSort(all, { sort: 'duration', descending: true }, now).map((w) => w.metadata.name)).toEqual([
      'xgamma',
      'alpha',
      'beta',
    ]);
  });

  it('puts running workflows first when sorted by phase', () => {
    expect(filterAndSort(all, { sort: 'phase', descending: false })[0].metadata.name).toBe('xgamma');
  });

  it('renders only the rows on screen, with a margin', () => {
    expect(visibleRange(0, 320, 32, 1000)).toEqual([0, 20]);
    expect(visibleRange(3200, 320, 32, 1000)).toEqual([90, 120]);
    expect(visibleRange(32000, 320, 32, 1000)).toEqual([990, 1000]);
  });
});
