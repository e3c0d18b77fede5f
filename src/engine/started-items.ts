/**
 * The items of a loop that already have nodes, read from the node that groups them (a StepGroup,
 * a TaskGroup): it links each item's node as a child as the item starts, in item order, so its
 * first children are the started items. A reconcile of a loop of 100,000 items then looks at the
 * phase of those that finished instead of building each one's call and looking it up by name
 * (execute-steps.ts, execute-dag.ts).
 *
 * Trusted only as far as can be seen without building every call: the first and last started
 * item and every item still running must have the names their index gives (a retry that removed
 * an item's node shifts the rest and is caught here); otherwise undefined, and the caller walks
 * every call as before.
 */
import type { NodeStatus } from '../api/index.js';
import type { ExpandedCall } from './call-expansion.js';
import type { EngineRun } from './engine-run.js';
import { isFailure, isFinal } from './node-phase.js';

export interface StartedItems {
  /** Items 0..count-1 have nodes: the group's first `count` children. */
  count: number;
  /** The first finished one whose failure counts (`counts`). */
  failed?: NodeStatus;
  /** Indices of those still running. */
  live: number[];
}

/**
 * @param loop how many items, and the i-th's call
 * @param counts whether a failed item fails the group (not when continueOn lets it go on)
 * @param othersAfter the group may link other nodes after all items started (a TaskGroup's dependents)
 */
export function startedItems(
  run: EngineRun,
  group: NodeStatus,
  loop: { count: number; at(i: number): ExpandedCall },
  counts: (node: NodeStatus) => boolean,
  othersAfter: boolean,
): StartedItems | undefined {
  const children = group.children ?? [];
  if (children.length > loop.count && !othersAfter) return undefined;
  const count = Math.min(children.length, loop.count);
  // None started yet (the group is new): the caller starts items from the first, each looked up
  // as it starts, instead of building all 100,000 calls to find that none has a node.
  if (count === 0) return { count: 0, live: [] };
  let failed: NodeStatus | undefined;
  const live: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = children[i]!;
    // Most items of a large loop ended before this run and stay as they are: what the run found
    // of them when it began (failed or not) is enough, without reading each node.
    if (!run.mayHaveChanged(id)) {
      if (run.failedIds.has(id)) {
        const node = run.nodes[id]!;
        if (counts(node)) failed ??= node;
      } else if (!Object.hasOwn(run.nodes, id)) return undefined;
      continue;
    }
    const node = run.nodes[id];
    if (node === undefined) return undefined;
    if (!isFinal(node.phase)) live.push(i);
    else if (isFailure(node.phase) && counts(node)) failed ??= node;
  }
  for (const i of new Set([0, count - 1, ...live])) if (run.nodes[children[i]!]!.name !== loop.at(i).name) return undefined;
  return { count, ...(failed ? { failed } : {}), live };
}
