/**
 * The server's reader of offloaded nodes (src/api/offloaded-nodes.ts): the last few node sets
 * read, by workflow and version, so a page watching a huge workflow reads each version from the
 * database once, not once per event and viewer. Bounded: at most `capacity` sets are held (a
 * 100,000-node set is about 100 MB), the oldest read dropped first.
 */
import type { NodeStatus, NodeStatusReader } from '../api/index.js';

export class NodeStatusCache implements NodeStatusReader {
  private readonly sets = new Map<string, Promise<Record<string, NodeStatus>>>();

  constructor(
    private readonly source: NodeStatusReader,
    private readonly capacity = 2,
  ) {}

  load(uid: string, version: number): Promise<Record<string, NodeStatus>> {
    const key = `${uid}@${version}`;
    let set = this.sets.get(key);
    if (set) {
      this.sets.delete(key);
    } else {
      set = this.source.load(uid, version);
      // A failed read is not kept: the next reader tries again.
      set.catch(() => this.sets.get(key) === set && this.sets.delete(key));
    }
    this.sets.set(key, set);
    while (this.sets.size > this.capacity) this.sets.delete(this.sets.keys().next().value!);
    return set;
  }
}
