import { describe, expect, it } from 'vitest';
import { lostNodes } from './lost-nodes.js';

const ready = (name: string, status = 'True') => ({ name, ready: { status, since: '2026-11-29T00:00:00Z' } });

describe('lostNodes', () => {
  const now = 1_000_000;
  it('finds nothing lost while nodes are Ready and their kubelets renew their leases', () => {
    const leases = new Map([['a', { changedAt: now - 10_000 }]]);
    expect(lostNodes(['a', 'a'], [ready('a')], leases, now, 40_000)).toEqual(new Map());
  });

  it('names a node that no longer exists, one not Ready, and one whose lease stopped', () => {
    const leases = new Map([['c', { changedAt: now - 45_000 }]]);
    const lost = lostNodes(['gone', 'b', 'c'], [ready('b', 'Unknown'), ready('c')], leases, now, 40_000);
    expect(lost.get('gone')).toBe('node "gone" no longer exists');
    expect(lost.get('b')).toBe('node "b" is not ready (Ready=Unknown since 2026-11-29T00:00:00Z)');
    expect(lost.get('c')).toBe('the kubelet of node "c" stopped renewing its lease 45 s ago');
  });

  it('judges no node gone when the node list failed, and a node without a lease only by its condition', () => {
    expect(lostNodes(['a'], undefined, new Map(), now, 40_000)).toEqual(new Map());
    expect(lostNodes(['a'], [{ name: 'a' }], new Map(), now, 40_000)).toEqual(new Map());
  });
});
