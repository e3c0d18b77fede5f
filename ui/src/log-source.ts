import type { NodeStatus, Workflow } from './types.js';

/**
 * Which pod and containers a node's logs come from: its own pod's `main`; for a containerSet,
 * whose members are Container nodes under the Pod node, the members' containers — a member's own
 * node reads its container of its parent's pod.
 */
export function logSource(wf: Workflow, node: NodeStatus): { pod: string; containers: string[] } | undefined {
  const nodes = wf.status?.nodes ?? {};
  const members = (n: NodeStatus) =>
    (n.children ?? [])
      .map((c) => nodes[c])
      .filter((c) => c?.type === 'Container')
      .map((c) => c.displayName);
  if (node.podName) {
    const own = members(node);
    return { pod: node.podName, containers: [...(own.length ? own : ['main']), 'init', 'wait'] };
  }
  if (node.type !== 'Container') return undefined;
  const parent = Object.values(nodes).find((n) => n.podName && n.children?.includes(node.id));
  if (!parent?.podName) return undefined;
  const others = members(parent).filter((m) => m !== node.displayName);
  return { pod: parent.podName, containers: [node.displayName, ...others, 'init', 'wait'] };
}
