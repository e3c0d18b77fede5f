/**
 * The shard bucket of a workflow: with several active controller replicas (`--sharding`) each
 * replica owns some of SHARD_BUCKETS buckets (shard-ring.ts), and watches only the pods labelled
 * with its buckets — the API server selects by label, never by a hash of a name, so the bucket is
 * written on every pod when it is created (and costs no write of its own). Workflows carry no
 * bucket: they are created by people, and labelling each one would be a write per workflow.
 *
 * Pure (FNV-1a, no crypto module), so every replica and version computes the same bucket.
 */
import { LABEL_PREFIX } from './constants.js';

/** Label on the controller's pods: the shard bucket of their workflow. */
export const LABEL_SHARD_BUCKET = `${LABEL_PREFIX}shard-bucket`;

/**
 * Buckets: enough that three replicas get about a third each (within a few percent), few enough that a replica's pod
 * watch selects its buckets in one short `in (…)`. Changing it moves every running workflow's
 * pods out of sight of their owner: it is fixed.
 */
export const SHARD_BUCKETS = 1024;

/** The bucket (0 … SHARD_BUCKETS-1) of a queue key or of `namespace/name`. */
export function shardBucketOfKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % SHARD_BUCKETS;
}

/** The bucket label value of a workflow's pods. */
export function shardBucketLabel(namespace: string, workflow: string): string {
  return String(shardBucketOfKey(`${namespace}/${workflow}`));
}
