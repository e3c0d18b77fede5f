/**
 * What the engine run (engine-run.ts) needs to know of a node while it copies the node table in.
 */
import type { NodeStatus } from '../api/index.js';

/** Whether a node's outputs name a global parameter or artifact (`globalName`). */
export function exportsGlobals(n: NodeStatus): boolean {
  return n.outputs?.parameters?.some((p) => p.globalName) === true || n.outputs?.artifacts?.some((a) => a.globalName) === true;
}

/**
 * A deep copy of a node the run may change in place. Its children list (a loop's group links
 * 100,000 items) is only ids: sliced, not put through structuredClone with the rest.
 */
export function copyNode(node: NodeStatus): NodeStatus {
  if (node.children === undefined) return structuredClone(node);
  const { children, ...rest } = node;
  const copy = structuredClone(rest) as NodeStatus;
  copy.children = children.slice();
  return copy;
}
