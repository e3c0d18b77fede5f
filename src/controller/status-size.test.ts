import { describe, expect, it } from 'vitest';
import type { Workflow, WorkflowStatus } from '../api/index.js';
import { ApiError, isTooLarge, isTransient } from '../kube/errors.js';
import { serializedSize, tooLargeMessage, tooLargeStatus } from './status-size.js';

const now = '2024-01-01T00:01:00.000Z';

describe('a status too large to store', () => {
  it('is measured as the whole stored object', () => {
    const wf: Workflow = { metadata: { name: 'wf', namespace: 'ns' }, spec: { entrypoint: 'x' } };
    const status: WorkflowStatus = { phase: 'Running', message: 'é'.repeat(100) };
    expect(serializedSize(wf, status)).toBe(Buffer.byteLength(JSON.stringify({ ...wf, status })));
    expect(serializedSize(wf, status)).toBeGreaterThan(200); // UTF-8 bytes, not characters
  });

  it('ends the workflow in Error naming the size and the limit; stored nodes are kept or dropped', () => {
    const previous: WorkflowStatus = {
      phase: 'Running',
      startedAt: '2024-01-01T00:00:00.000Z',
      progress: '1/2',
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
    const message = tooLargeMessage(2_725_715, 1_572_864, 9_001);
    expect(message).toBe(
      "the workflow's status is too large to store: 2,725,715 bytes serialized with 9,001 nodes, over the limit of 1,572,864 bytes; it was stopped instead of being retried forever (split large loops into child workflows, or raise --max-status-bytes if the API server and etcd accept more)",
    );
    const kept = tooLargeStatus(previous, message, now, true);
    expect(kept).toMatchObject({ phase: 'Error', message, startedAt: '2024-01-01T00:00:00.000Z', finishedAt: now });
    expect(kept.progress).toBeUndefined();
    expect(kept.nodes!.wf).toMatchObject({ phase: 'Error', finishedAt: now });
    expect(kept.nodes!['wf-1']).toEqual(previous.nodes!['wf-1']);
    expect(previous.nodes!.wf!.phase).toBe('Running');
    expect(tooLargeStatus(previous, message, now, false).nodes).toEqual({});
    expect(tooLargeStatus(undefined, message, now, true)).toMatchObject({ phase: 'Error', startedAt: now, nodes: {} });
  });

  it('a write refused as too large is final, never transient', () => {
    const etcd = new ApiError(
      500,
      '',
      'rpc error: code = ResourceExhausted desc = trying to send message larger than max (2725715 vs. 2097152)',
      'PATCH x',
    );
    const body = new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728', 'PATCH x');
    const etcdRequest = new ApiError(500, 'InternalError', 'etcdserver: request is too large', 'PATCH x');
    for (const e of [etcd, body, etcdRequest]) {
      expect(isTooLarge(e), e.message).toBe(true);
      expect(isTransient(e), e.message).toBe(false);
    }
    const plain500 = new ApiError(500, 'InternalError', 'etcd leader changed', 'PATCH x');
    expect(isTooLarge(plain500)).toBe(false);
    expect(isTransient(plain500)).toBe(true);
    expect(isTooLarge(new ApiError(0, '', 'socket hang up', 'PATCH x'))).toBe(false);
  });
});
