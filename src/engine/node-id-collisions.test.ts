import { describe, expect, it } from 'vitest';
import type { WorkflowSpec } from '../api/index.js';
import { loopItemName, nodeIdFor } from './node-naming.js';
import { World } from './test-world.js';

/**
 * Node ids are a 32-bit hash of the node name, as the peer's: a big loop has names that hash
 * alike. In workflow `c`, items 6058 and 6496 of `c[0].each` do. Neither may be lost or run in the
 * other's place.
 */
describe('node names that hash to the same id', () => {
  const loop = (template: 'wait' | 'work'): WorkflowSpec => ({
    entrypoint: 'main',
    templates: [
      { name: 'main', steps: [[{ name: 'each', template, withSequence: { count: '6500' } }]] },
      { name: 'wait', suspend: { duration: '0' } },
      { name: 'work', container: { image: 'alpine', command: ['true'] } },
    ],
  });
  const first = loopItemName('c[0].each', 6058, '6058');
  const second = loopItemName('c[0].each', 6496, '6496');

  it('the two names do collide', () => {
    expect(nodeIdFor('c', first)).toBe(nodeIdFor('c', second));
  });

  it('gives the later node the next free id, every item runs once, and later reconciles find each where it is', () => {
    const w = new World(loop('wait'), { name: 'c' });
    w.reconcile();
    expect(w.status.phase).toBe('Succeeded');
    const nodes = Object.values(w.status.nodes ?? {});
    expect(nodes).toHaveLength(6502);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    expect(byName.get(first)?.id).toBe(nodeIdFor('c', first));
    expect(byName.get(second)?.id).toBe(nodeIdFor('c', `${second}#1`));
    for (const n of nodes) expect(w.status.nodes![n.id]!.name).toBe(n.name);
  });

  it('gives their pods different names, kept across reconciles', () => {
    const w = new World(loop('work'), { name: 'c' });
    w.reconcile();
    const pods = [...w.created.values()];
    expect(pods).toHaveLength(6500);
    expect(new Set(w.created.keys()).size).toBe(6500);
    const nodesOf = new Map(Object.values(w.status.nodes ?? {}).map((n) => [n.name, n]));
    const a = nodesOf.get(first)!;
    const b = nodesOf.get(second)!;
    expect(a.podName).not.toBe(b.podName);
    w.succeedPod(b.displayName);
    w.reconcile();
    expect(w.status.nodes![b.id]!.phase).toBe('Succeeded');
    expect(w.status.nodes![a.id]!.phase).not.toBe('Succeeded');
  });
});
