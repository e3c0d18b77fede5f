/**
 * The child nodes of a containerSet step, one per container of the set (type Container, named
 * `<pod node>.<container>`, as the peer shows them): each follows what the kubelet reports for its
 * container — Pending, Running, Succeeded, Failed, or Skipped when its command did not run
 * because a dependency failed. When the pod node ends, a container that never finished ends
 * with it (Omitted after a success, the pod node's phase otherwise), so no child stays Running.
 */
import type { NodeStatus, Template } from '../api/index.js';
import type { PodObservation } from './contract.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';

export function syncContainerNodes(run: EngineRun, node: NodeStatus, template: Template, obs: PodObservation | undefined): void {
  const members = template.containerSet?.containers ?? [];
  if (members.length === 0) return;
  const seen = new Map((obs?.containers ?? []).map((c) => [c.name, c]));
  for (const member of members) {
    if (!member.name) continue;
    const name = `${node.name}.${member.name}`;
    let child = run.nodeByName(name);
    if (!child) {
      child = run.createNode({
        name,
        displayName: member.name,
        type: 'Container',
        phase: 'Pending',
        ...(node.boundaryID !== undefined ? { boundaryID: node.boundaryID } : {}),
      });
      run.addChild(node, child);
    }
    if (isFinal(child.phase)) continue;
    const o = seen.get(member.name);
    if (o?.startedAt) child.startedAt = o.startedAt;
    if (o && o.phase !== 'Pending') {
      run.setPhase(child, o.phase, o.message ?? '');
      if (o.finishedAt && isFinal(child.phase)) child.finishedAt = o.finishedAt;
    }
    if (!isFinal(child.phase) && isFinal(node.phase)) {
      if (node.phase === 'Succeeded') run.setPhase(child, 'Omitted', 'the step ended before this container did');
      else run.setPhase(child, node.phase, node.message ?? '');
    }
  }
}
