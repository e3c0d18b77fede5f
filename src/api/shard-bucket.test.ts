import { describe, expect, it } from 'vitest';
import { SHARD_BUCKETS, shardBucketLabel, shardBucketOfKey } from './shard-bucket.js';

describe('shard buckets', () => {
  it('are fixed: a pod labelled by one version is found by the next (these values must never change)', () => {
    expect(SHARD_BUCKETS).toBe(1024);
    expect([shardBucketOfKey('team-a/build-1'), shardBucketOfKey('default/hello-world-x7k2p'), shardBucketOfKey('ns/wf')]).toEqual([
      831, 149, 118,
    ]);
    expect(shardBucketLabel('team-a', 'build-1')).toBe(String(shardBucketOfKey('team-a/build-1')));
  });

  it('spread workflows over every bucket about evenly', () => {
    const count = new Array<number>(SHARD_BUCKETS).fill(0);
    for (let i = 0; i < 100_000; i++) count[shardBucketOfKey(`team-${i % 13}/wf-${i}`)]!++;
    expect(Math.min(...count)).toBeGreaterThan(40);
    expect(Math.max(...count)).toBeLessThan(160);
  });
});
