import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../api/index.js';
import { NodeStatusCache } from './node-status-cache.js';

describe("the server's cache of offloaded node sets", () => {
  it('reads each version once, keeps the newest few, and forgets a failed read', async () => {
    const reads: string[] = [];
    let fail = false;
    const cache = new NodeStatusCache(
      {
        load: async (uid, version) => {
          reads.push(`${uid}@${version}`);
          if (fail) throw new Error('database down');
          return { [uid]: { id: uid, name: uid, displayName: uid, type: 'Steps', phase: 'Running' } as NodeStatus };
        },
      },
      2,
    );
    await cache.load('a', 1);
    await cache.load('a', 1);
    expect(reads).toEqual(['a@1']);
    await cache.load('a', 2);
    await cache.load('b', 1);
    await cache.load('a', 1); // dropped as the oldest
    expect(reads).toEqual(['a@1', 'a@2', 'b@1', 'a@1']);
    fail = true;
    await expect(cache.load('c', 1)).rejects.toThrow(/database down/);
    fail = false;
    await cache.load('c', 1);
    expect(reads.filter((r) => r === 'c@1')).toHaveLength(2);
  });
});
