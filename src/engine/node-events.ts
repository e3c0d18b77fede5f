/**
 * The peer's node Events (WorkflowNodeRunning, WorkflowNodeSucceeded, WorkflowNodeFailed,
 * WorkflowNodeError): one for every node whose phase became one of those between two stored
 * statuses, in the order the nodes started. Pure; the controller records them
 * (src/controller/features/node-events.ts) when asked to (`--node-events`).
 */
import type { NodePhase, NodeStatus, WorkflowStatus } from '../api/index.js';

export interface NodeEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  /** `Succeeded node <name>: <message>`, as the peer words it. */
  message: string;
  nodeName: string;
  nodeType: string;
}

const REASONS: Partial<Record<NodePhase, { reason: string; type: NodeEvent['type'] }>> = {
  Running: { reason: 'WorkflowNodeRunning', type: 'Normal' },
  Succeeded: { reason: 'WorkflowNodeSucceeded', type: 'Normal' },
  Failed: { reason: 'WorkflowNodeFailed', type: 'Warning' },
  Error: { reason: 'WorkflowNodeError', type: 'Warning' },
};

/** The node Events of the change from `before` to `after`. */
export function nodeEvents(before: WorkflowStatus | undefined, after: WorkflowStatus): NodeEvent[] {
  const was = before?.nodes ?? {};
  const changed: NodeStatus[] = [];
  for (const [id, node] of Object.entries(after.nodes ?? {})) {
    if (was[id]?.phase === node.phase || !REASONS[node.phase]) continue;
    changed.push(node);
  }
  changed.sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.id.localeCompare(b.id));
  return changed.map((node) => {
    const { reason, type } = REASONS[node.phase]!;
    const name = node.name;
    return {
      type,
      reason,
      message: node.message ? `${node.phase} node ${name}: ${node.message}` : `${node.phase} node ${name}`,
      nodeName: name,
      nodeType: node.type,
    };
  });
}
