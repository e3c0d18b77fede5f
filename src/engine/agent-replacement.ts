/**
 * Whether a failed agent pod is replaced or given up on — decided here, from the observation and
 * the count kept in the workflow's status (`status.agent`), so the bound survives a restarted
 * controller. The applier only executes `replaceAgent` (delete the failed pod; `ensureAgent`
 * then creates its successor once the name is free).
 *
 * - Each failed pod counts once, by uid (it stays visible, failed and then terminating, over
 *   several reconciles while it is being deleted).
 * - A pod that was merely deleted (not failed by itself) is replaced without counting.
 * - The (MAX_AGENT_REPLACEMENTS + 1)th failed pod is not replaced: the agent is then failed for
 *   good, and every unfinished plugin/http node ends in Error with the reason and the count.
 * - The count is recorded and the pod replaced only while some task still waits for the agent
 *   (the walk emitted `ensureAgent`); with nothing left to run, a failed pod is just cleaned up.
 */
import type { AgentStatus } from '../api/index.js';
import type { AgentObservation, EngineAction } from './contract.js';

/** Failed agent pods of one workflow that are replaced before the engine gives up. */
export const MAX_AGENT_REPLACEMENTS = 5;

export interface AgentDecision {
  /** The agent as the walk must see it: after giving up, Failed for good (no `replacing`). */
  agent: AgentObservation | undefined;
  /** A failed pod to replace: the status record to keep and the action, used if a task waits. */
  replace?: { record: AgentStatus; action: Extract<EngineAction, { kind: 'replaceAgent' }> };
}

export function decideAgent(recorded: AgentStatus | undefined, observed: AgentObservation | undefined): AgentDecision {
  if (!observed || observed.phase !== 'Failed' || !observed.replacing || observed.deleted || !observed.podName || !observed.podUID) {
    return { agent: observed };
  }
  const counted = recorded?.replacedPodUID === observed.podUID;
  const replacements = (recorded?.replacements ?? 0) + (counted ? 0 : 1);
  const reason = observed.message ?? `agent pod ${observed.podName} failed`;
  if (replacements > MAX_AGENT_REPLACEMENTS) {
    return { agent: { phase: 'Failed', message: `${reason}; it failed ${replacements} times, the controller gave up replacing it` } };
  }
  return {
    agent: observed,
    replace: {
      record: { replacements, replacedPodUID: observed.podUID },
      action: { kind: 'replaceAgent', podName: observed.podName, podUID: observed.podUID, reason, replacement: replacements },
    },
  };
}
