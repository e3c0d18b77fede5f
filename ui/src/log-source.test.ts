import { describe, expect, it } from 'vitest';
import type { NodeStatus, Workflow } from './types.js';
import { logSource } from './log-source.js';

const n = (id: string, type: NodeStatus['type'], extra: Partial<NodeStatus> = {}): NodeStatus => ({
  id,
  name: id,
  displayName: id,
  type,
  phase: 'Succeeded',
  ...extra,
});

describe("where a node's logs come from", () => {
  const wf: Workflow = {
    metadata: { name: 'w', namespace: 'ns' },
    status: {
      nodes: {
        pod: n('pod', 'Pod', { podName: 'w-pod', children: ['a', 'b'] }),
        a: n('a', 'Container'),
        b: n('b', 'Container'),
        plain: n('plain', 'Pod', { podName: 'w-plain' }),
        dag: n('dag', 'DAG', { children: ['plain'] }),
      },
    },
  };
  const nodes = wf.status!.nodes!;

  it("reads a step pod's main container", () => {
    expect(logSource(wf, nodes.plain)).toEqual({ pod: 'w-plain', containers: ['main', 'init', 'wait'] });
  });

  it("reads a containerSet's members, and a member's own container of its parent's pod first", () => {
    expect(logSource(wf, nodes.pod)).toEqual({ pod: 'w-pod', containers: ['a', 'b', 'init', 'wait'] });
    expect(logSource(wf, nodes.b)).toEqual({ pod: 'w-pod', containers: ['b', 'a', 'init', 'wait'] });
  });

  it('has no log for a node without a pod', () => {
    expect(logSource(wf, nodes.dag)).toBeUndefined();
  });
});
