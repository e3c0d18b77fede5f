import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../api/index.js';
import { around } from './nodes-reply.js';

const wf = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'w', namespace: 'ns' },
  spec: { entrypoint: 'main' },
  status: { phase: 'Succeeded', nodes: { old: { id: 'old' } }, finishedAt: '2026-12-01T00:00:00Z' },
} as unknown as Workflow;

describe('the JSON around streamed nodes', () => {
  it('is the workflow with its nodes member in place, whatever nodes the status held', () => {
    const { head, tail } = around(wf, false);
    const nodes = `${JSON.stringify('a')}:{"id":"a"},${JSON.stringify('b"c')}:{"id":"b\\"c"}`;
    expect(JSON.parse(head + nodes + tail)).toEqual({
      ...wf,
      status: { phase: 'Succeeded', finishedAt: '2026-12-01T00:00:00Z', nodes: { a: { id: 'a' }, 'b"c': { id: 'b"c' } } },
    });
    expect(JSON.parse(head + tail).status.nodes).toEqual({});
  });

  it('leaves nodes out when there are none, as the whole read did', () => {
    const { head, tail } = around(wf, true);
    expect(tail).toBe('');
    expect(JSON.parse(head).status).toEqual({ phase: 'Succeeded', finishedAt: '2026-12-01T00:00:00Z' });
  });
});
