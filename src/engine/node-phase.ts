/**
 * Small questions about a node's phase and times that every executor asks.
 */
import { FINAL_NODE_PHASES, type NodePhase, type NodeStatus } from '../api/index.js';

export function isFinal(phase: NodePhase | undefined): boolean {
  return phase !== undefined && FINAL_NODE_PHASES.includes(phase);
}

/** A node its siblings and dependents no longer wait for: finished, or a ready daemon (daemons.ts). */
export function isFulfilled(node: NodeStatus): boolean {
  return isFinal(node.phase) || node.daemoned === true;
}

export function isFailure(phase: NodePhase | undefined): phase is 'Failed' | 'Error' {
  return phase === 'Failed' || phase === 'Error';
}

export function toMs(iso: string | undefined, fallback: number): number {
  if (!iso) return fallback;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? fallback : ms;
}
