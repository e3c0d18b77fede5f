import { describe, expect, it } from 'vitest';
import type { WorkflowStatus } from '../api/index.js';
import { engineFailureStatus } from './engine-failure.js';

describe('engineFailureStatus', () => {
  const now = '2024-01-01T00:01:00.000Z';

  it('ends the workflow in Error naming the internal failure, and its unfinished nodes with it', () => {
    const previous: WorkflowStatus = {
      phase: 'Running',
      startedAt: '2024-01-01T00:00:00.000Z',
      nodes: {
        wf: { id: 'wf', name: 'wf', displayName: 'wf', type: 'Steps', phase: 'Running', startedAt: '2024-01-01T00:00:00.000Z' },
        'wf-1': {
          id: 'wf-1',
          name: 'wf[0].a',
          displayName: 'a',
          type: 'Pod',
          phase: 'Succeeded',
          startedAt: '2024-01-01T00:00:00.000Z',
          finishedAt: '2024-01-01T00:00:30.000Z',
        },
      },
    };
    const status = engineFailureStatus(previous, new RangeError('Maximum call stack size exceeded'), now);
    expect(status.phase).toBe('Error');
    expect(status.message).toBe(
      'internal error: the workflow engine failed on this workflow (RangeError: Maximum call stack size exceeded); it was stopped instead of being retried forever',
    );
    expect(status).toMatchObject({ startedAt: '2024-01-01T00:00:00.000Z', finishedAt: now });
    expect(status.nodes!.wf).toMatchObject({ phase: 'Error', message: status.message, finishedAt: now });
    expect(status.nodes!['wf-1']).toEqual(previous.nodes!['wf-1']);
    expect(previous.nodes!.wf!.phase).toBe('Running');
  });

  it('works on a workflow that never had a status, and keeps the message bounded', () => {
    const status = engineFailureStatus(undefined, new Error('x'.repeat(10_000)), now);
    expect(status).toMatchObject({ phase: 'Error', startedAt: now, finishedAt: now, nodes: {} });
    expect(status.message!.length).toBeLessThan(700);
    expect(engineFailureStatus(undefined, 'a string', now).message).toContain('(a string)');
  });

  it('leaves a finished workflow as it is (a finished workflow stays finished)', () => {
    const previous = { phase: 'Succeeded' as const, finishedAt: 't0', nodes: {} };
    expect(engineFailureStatus(previous, new Error('boom'), now)).toBe(previous);
  });
});
