/**
 * What a workflow becomes when the engine throws on it (an engine bug): Error, said in its
 * message, instead of a reconcile retried forever.
 */
import { FINAL_NODE_PHASES, FINAL_WORKFLOW_PHASES, type WorkflowStatus } from '../api/index.js';

/** Longest excerpt of the engine's error kept in the workflow's message. */
const ENGINE_ERROR_EXCERPT = 500;

/**
 * The status of a workflow the engine threw on: Error, with a message naming the internal
 * failure; unfinished nodes end in Error with it. Running pods and the agent are cleaned up by
 * the next reconcile, as for any finished workflow (the engine's path for those does not walk
 * the templates).
 */
export function engineFailureStatus(previous: WorkflowStatus | undefined, err: unknown, now: string): WorkflowStatus {
  // A finished workflow stays finished, and a finished node as it is (engine/node-lifecycle.ts).
  if (previous?.phase && FINAL_WORKFLOW_PHASES.includes(previous.phase)) return previous;
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const excerpt = what.length > ENGINE_ERROR_EXCERPT ? `${what.slice(0, ENGINE_ERROR_EXCERPT)}…` : what;
  const message = `internal error: the workflow engine failed on this workflow (${excerpt}); it was stopped instead of being retried forever`;
  const nodes = structuredClone(previous?.nodes ?? {});
  for (const node of Object.values(nodes)) {
    if (FINAL_NODE_PHASES.includes(node.phase)) continue;
    node.phase = 'Error';
    node.message = message;
    node.finishedAt ??= now;
  }
  return { ...(previous ?? {}), phase: 'Error', message, startedAt: previous?.startedAt ?? now, finishedAt: now, nodes };
}
