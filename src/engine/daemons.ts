/**
 * Daemon steps (`template.daemon: true` on a container or script template), as in the peer: the
 * step counts as done once its main container is ready (its readiness probe passes, or it runs and
 * has none) — the node is marked `daemoned`, stays Running, and carries the pod's IP for
 * `{{steps.X.ip}}` / `{{tasks.X.ip}}`. The workflow never waits for the daemon to exit: when the
 * Steps or DAG template that started it ends (whatever its outcome), its daemons are stopped — the
 * node becomes Succeeded "daemon stopped: …" and, as for any finished node, its pod is deleted.
 * A daemon whose pod fails or disappears before that ends Failed/Error as any step does.
 */
import type { NodeStatus } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';

/** Marks a ready daemon pod node (and records its IP). */
export function markDaemoned(run: EngineRun, node: NodeStatus, podIP: string | undefined): void {
  node.daemoned = true;
  if (podIP) node.podIP = podIP;
  run.hasDaemons = true;
}

/** Stops the running daemons whose scope is the finished Steps/DAG node `scope`. */
export function stopDaemons(run: EngineRun, scope: NodeStatus, why: string): void {
  if (!run.hasDaemons) return;
  for (const node of Object.values(run.nodes)) {
    if (node.daemoned && !isFinal(node.phase) && node.boundaryID === scope.id) run.setPhase(node, 'Succeeded', `daemon stopped: ${why}`);
  }
}

/** Stops every daemon still running: the workflow ended. */
export function stopAllDaemons(run: EngineRun): void {
  if (!run.hasDaemons) return;
  for (const node of Object.values(run.nodes)) {
    if (node.daemoned && !isFinal(node.phase)) run.setPhase(node, 'Succeeded', 'daemon stopped: the workflow ended');
  }
}
