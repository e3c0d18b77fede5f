import { describe, expect, it } from 'vitest';
import { SHARD_BUCKETS, shardBucketOfKey } from '../api/index.js';
import { ShardRing } from './shard-ring.js';

const keys = Array.from({ length: 10_000 }, (_, i) => `team-${i % 37}/wf-${i}`);

function shares(ring: ShardRing): Map<string, number> {
  const count = new Map<string, number>();
  for (const k of keys) {
    const o = ring.ownerOf(k)!;
    count.set(o, (count.get(o) ?? 0) + 1);
  }
  return count;
}

describe('ShardRing', () => {
  it('gives every key to one member, the same on every replica whatever order members are listed in', () => {
    const a = new ShardRing(['c', 'a', 'b']);
    const b = new ShardRing(['b', 'c', 'a', 'a']);
    expect(a.members).toEqual(['a', 'b', 'c']);
    for (const k of keys.slice(0, 500)) expect(b.ownerOf(k)).toBe(a.ownerOf(k));
    expect(a.sameMembers(b)).toBe(true);
    expect(a.sameMembers(new ShardRing(['a', 'b']))).toBe(false);
  });

  it('gives each shard bucket to one member, and every key to the member of its bucket', () => {
    const ring = new ShardRing(['replica-0', 'replica-1', 'replica-2']);
    const buckets = ring.members.flatMap((m) => ring.bucketsOf(m));
    expect(buckets.sort((a, b) => a - b)).toEqual(Array.from({ length: SHARD_BUCKETS }, (_, i) => i));
    for (const k of keys.slice(0, 2000)) expect(ring.bucketsOf(ring.ownerOf(k)!)).toContain(shardBucketOfKey(k));
    expect(new ShardRing([]).bucketsOf('replica-0')).toEqual([]);
  });

  it('has no owner without members, and one member owns everything', () => {
    expect(new ShardRing([]).ownerOf('ns/wf')).toBeUndefined();
    const solo = new ShardRing(['only']);
    expect(keys.every((k) => solo.ownerOf(k) === 'only')).toBe(true);
  });

  it('shares keys about evenly between three members', () => {
    const count = shares(new ShardRing(['replica-0', 'replica-1', 'replica-2']));
    expect(count.size).toBe(3);
    for (const n of count.values()) {
      expect(n).toBeGreaterThan(10_000 / 3 - 600);
      expect(n).toBeLessThan(10_000 / 3 + 600);
    }
  });

  it('moves only the keys of a member that leaves, and only keys to a member that joins', () => {
    const three = new ShardRing(['r0', 'r1', 'r2']);
    const two = new ShardRing(['r0', 'r2']);
    let moved = 0;
    for (const k of keys) {
      const before = three.ownerOf(k);
      const after = two.ownerOf(k);
      if (before !== 'r1') expect(after).toBe(before);
      else moved++;
    }
    expect(moved).toBe(shares(three).get('r1'));
    const four = new ShardRing(['r0', 'r1', 'r2', 'r3']);
    for (const k of keys) {
      const after = four.ownerOf(k);
      if (after !== 'r3') expect(after).toBe(three.ownerOf(k));
    }
    // The newcomer takes about a quarter.
    expect(shares(four).get('r3')).toBeGreaterThan(2_000);
  });
});
