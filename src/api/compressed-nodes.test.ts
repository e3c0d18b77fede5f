import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inflateStatus, inflateWorkflow, storedForm, storedStatus } from './compressed-nodes.js';
import type { NodeStatus, WorkflowStatus } from './workflow-status.js';

function nodes(n: number): Record<string, NodeStatus> {
  const out: Record<string, NodeStatus> = {};
  for (let i = 0; i < n; i++) {
    const id = `wf-${1000 + i}`;
    out[id] = { id, name: `wf[0].each(${i}:${i})`, displayName: `each(${i}:${i})`, type: 'Pod', phase: 'Succeeded', templateName: 'work' };
  }
  return out;
}

describe('compressed nodes', () => {
  it('stores small node maps as they are and large ones compressed, and reads both back the same', () => {
    const small: WorkflowStatus = { phase: 'Running', nodes: nodes(3) };
    expect(storedStatus(small)).toEqual(small);
    const large: WorkflowStatus = { phase: 'Running', nodes: nodes(5000) };
    const stored = storedStatus(large);
    expect(stored.nodes).toBeUndefined();
    expect(typeof stored.compressedNodes).toBe('string');
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(large).length / 5);
    expect(inflateStatus(stored)).toEqual(large);
    // Deterministic: the same nodes compress to the same string, so an unchanged status is no write.
    expect(storedStatus({ ...large }).compressedNodes).toBe(stored.compressedNodes);
  });

  it('keeps the stored string beside the nodes when asked, and storedForm gives back exactly what is stored', () => {
    const stored = storedStatus({ phase: 'Running', nodes: nodes(5000) });
    const kept = inflateStatus(stored, 'wf', true);
    expect(Object.keys(kept.nodes ?? {})).toHaveLength(5000);
    expect(storedForm(kept)).toEqual(stored);
    // A status computed from it compresses its own nodes; the old string is not carried over.
    const next = storedStatus({ ...kept, nodes: nodes(4999) });
    expect(next.compressedNodes).not.toBe(stored.compressedNodes);
    expect(Object.keys(inflateStatus(next).nodes ?? {})).toHaveLength(4999);
  });

  it('refuses unreadable or hostile compressed nodes, naming the workflow, and keeps prototype keys out', () => {
    const wf = { metadata: { namespace: 'ns', name: 'w' }, status: { compressedNodes: 'not gzip' } };
    expect(() => inflateWorkflow(wf)).toThrow(/^workflow ns\/w: status\.compressedNodes cannot be read/);
    const list = { compressedNodes: gzipSync('[1,2]').toString('base64') };
    expect(() => inflateStatus(list, 'wf')).toThrow('wf: status.compressedNodes does not hold a map of nodes');
    const proto = { compressedNodes: gzipSync('{"__proto__":{"polluted":true}}').toString('base64') };
    expect(() => inflateStatus(proto, 'wf')).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A status without compressed nodes, or already inflated, is returned as it is.
    const plain = { metadata: {}, status: { nodes: nodes(1) } };
    expect(inflateWorkflow(plain)).toBe(plain);
  });
});
