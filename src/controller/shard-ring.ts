/**
 * Which controller replica reconciles a key (a workflow's `namespace/name`, a CronWorkflow's
 * queue key): consistent hashing over the replicas that are live now (shard-members.ts).
 *
 * A key belongs to its shard bucket (api/shard-bucket.ts), and a bucket to a member: so a replica
 * can watch the pods of its workflows alone, selected by their bucket label. Each member is
 * placed on a 32-bit ring at `VIRTUAL_NODES` points, the hashes of `member#0`, `member#1`, …; a
 * bucket belongs to the member of the first point at or after the hash of `bucket#<n>`.
 * Why a ring and not `hash % N`: when a replica joins it takes about 1/N of the keys, a little
 * from every other replica, and when one leaves only its own keys move. With `hash % N` almost
 * every workflow would change hands on every join or leave, and each change of hands costs a
 * status write and a cold cache on the new owner.
 *
 * Pure and deterministic: every replica that sees the same members computes the same owners.
 */
import { createHash } from 'node:crypto';
import { SHARD_BUCKETS, shardBucketOfKey } from '../api/index.js';

/** Points per member: enough that 3 members share 10,000 keys within a few percent of a third each. */
export const VIRTUAL_NODES = 160;

function hash32(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

export class ShardRing {
  /** Sorted ring positions, and the member at each. */
  private readonly points: Uint32Array;
  private readonly owners: string[];
  /** The member of each bucket. */
  private readonly bucketOwners: (string | undefined)[];
  readonly members: readonly string[];

  constructor(members: Iterable<string>, virtualNodes = VIRTUAL_NODES) {
    this.members = [...new Set(members)].sort();
    const placed: [number, string][] = [];
    for (const m of this.members) for (let i = 0; i < virtualNodes; i++) placed.push([hash32(`${m}#${i}`), m]);
    // Ties (two members at one point) go to the smaller name on every replica alike.
    placed.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    this.points = Uint32Array.from(placed.map(([p]) => p));
    this.owners = placed.map(([, m]) => m);
    this.bucketOwners = Array.from({ length: SHARD_BUCKETS }, (_, b) => this.pointOwner(hash32(`bucket#${b}`)));
  }

  /** The member that owns `key` (the member of its bucket); undefined when the ring has no members. */
  ownerOf(key: string): string | undefined {
    return this.bucketOwners[shardBucketOfKey(key)];
  }

  /** The buckets `member` owns, ascending. */
  bucketsOf(member: string): number[] {
    return this.bucketOwners.flatMap((m, b) => (m === member ? [b] : []));
  }

  private pointOwner(h: number): string | undefined {
    const n = this.points.length;
    if (n === 0) return undefined;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.points[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === n ? 0 : lo];
  }

  /** Whether both rings have the same members (so every key has the same owner). */
  sameMembers(other: ShardRing): boolean {
    return this.members.length === other.members.length && this.members.every((m, i) => other.members[i] === m);
  }
}
