/**
 * Retrying a failed workflow, as `plugflow retry` and the REST call do it: a pure change of its
 * status that makes the controller run the failed parts again and keep what succeeded.
 *
 * - Only a workflow that ended Failed or Error can be retried.
 * - Leaf nodes (pods, suspend steps) that did not succeed are removed — their pods are listed to
 *   be deleted first, since pod names are deterministic and the new attempt reuses the name —
 *   and so are Omitted nodes (left out because something before them failed) and exit handlers
 *   (they run again when the retried part ends).
 * - Every group (steps, step group, DAG, loop, retry) above a removed node is set back to
 *   Running, so the engine walks into it again; Succeeded and Skipped nodes elsewhere are kept.
 * - `restartSuccessful` with a `selector` also re-runs the Succeeded leaves it matches
 *   (`displayName=…`, `name=…` or `templateName=…`), like the peer's --node-field-selector.
 * - Plugin and HTTP steps are refused for now: their agent has already been told the workflow
 *   is complete, and re-running them needs a new agent generation (said, not ignored).
 * The workflow goes back to Running; the caller clears spec.shutdown / spec.suspend and the
 * `completed` label, deletes the listed pods, then writes the status.
 */
import type { NodeStatus, WorkflowStatus } from '../api/index.js';

/** `precondition`: the workflow is not one that can be retried; `invalid`: the options or its steps. */
export class RetryError extends Error {
  constructor(
    readonly reason: 'precondition' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

export interface RetryOptions {
  /**
   * Also when no step failed (a workflow stopped between steps): every failed group is set back
   * to Running, so the rest runs. For `resubmit --memoized`, where the new workflow must run on.
   */
  evenWithoutFailedSteps?: boolean;
  restartSuccessful?: boolean;
  /** `displayName=X`, `name=X` or `templateName=X`; with restartSuccessful. */
  selector?: string;
}

export interface RetryResult {
  status: WorkflowStatus;
  /** Pods of the removed nodes, to delete before the status is written. */
  podsToDelete: string[];
  /** Display names of the nodes that will run again. */
  rerun: string[];
}

const GROUPS = new Set(['Steps', 'StepGroup', 'DAG', 'TaskGroup', 'Retry']);

function matcher(selector: string | undefined): (n: NodeStatus) => boolean {
  if (!selector) return () => true;
  const m = /^(displayName|name|templateName)=(.+)$/.exec(selector);
  if (!m)
    throw new RetryError(
      'invalid',
      `node field selector "${selector}": use displayName=<step>, name=<node name> or templateName=<template>`,
    );
  const [, field, value] = m;
  return (n) => (field === 'displayName' ? n.displayName : field === 'name' ? n.name : n.templateName) === value;
}

/** `name`: for messages (`ns/name`); `workflowName`: the root node's name (its exit handler is `<name>.onExit`). */
export function retryWorkflow(
  name: string,
  workflowName: string,
  status: WorkflowStatus | undefined,
  options: RetryOptions = {},
): RetryResult {
  const phase = status?.phase;
  if (phase !== 'Failed' && phase !== 'Error') {
    throw new RetryError(
      'precondition',
      `Workflow ${name} is ${phase || 'not started'}: only a workflow that ended Failed or Error can be retried`,
    );
  }
  if (options.selector && !options.restartSuccessful)
    throw new RetryError('invalid', 'a node field selector needs --restart-successful (it picks Succeeded steps to run again)');
  const selected = matcher(options.selector);
  const next: WorkflowStatus = structuredClone(status!);
  const nodes = next.nodes ?? {};
  const parent = new Map<string, string>();
  for (const n of Object.values(nodes)) for (const c of n.children ?? []) parent.set(c, n.id);

  const removed = new Set<string>();
  for (const n of Object.values(nodes)) {
    // A containerSet's container nodes go (and run again) with their pod node, below.
    if (GROUPS.has(n.type) || n.type === 'Container' || n.name.endsWith('.onExit')) continue;
    const failedLeaf = n.phase !== 'Succeeded' && n.phase !== 'Skipped';
    const restarted = n.phase === 'Succeeded' && options.restartSuccessful === true && selected(n);
    if (failedLeaf || restarted || n.phase === 'Omitted') removed.add(n.id);
  }
  const refused = [...removed].map((id) => nodes[id]!).filter((n) => n.type === 'Plugin' || n.type === 'HTTP');
  if (refused.length > 0) {
    throw new RetryError(
      'invalid',
      `Workflow ${name}: retrying plugin and http steps is not supported yet (${refused.map((n) => n.displayName).join(', ')}); resubmit it instead`,
    );
  }
  if (removed.size === 0 && !options.evenWithoutFailedSteps)
    throw new RetryError(
      'invalid',
      `Workflow ${name}: nothing to retry (no failed step${options.selector ? ` and none matching ${options.selector}` : ''})`,
    );

  for (const id of [...removed]) for (const c of nodes[id]?.children ?? []) if (nodes[c]?.type === 'Container') removed.add(c);

  // Every group above a removed node runs again.
  const reset = new Set<string>();
  const resetAbove = (id: string) => {
    for (let p = parent.get(id); p !== undefined && !removed.has(p); p = parent.get(p)) reset.add(p);
  };
  for (const id of removed) resetAbove(id);
  // Exit handlers run again when what they belong to ends again (the workflow's always does):
  // each is removed with its whole subtree.
  const byName = new Map(Object.values(nodes).map((n) => [n.name, n.id]));
  const subtree = (id: string) => {
    for (const c of nodes[id]?.children ?? []) {
      if (removed.has(c) || !nodes[c]) continue;
      removed.add(c);
      subtree(c);
    }
  };
  for (const n of Object.values(nodes)) {
    if (!n.name.endsWith('.onExit')) continue;
    const owner = n.name.slice(0, -'.onExit'.length);
    const ownerId = byName.get(owner);
    if (owner === workflowName || (ownerId !== undefined && (removed.has(ownerId) || reset.has(ownerId)))) {
      removed.add(n.id);
      subtree(n.id);
      resetAbove(n.id);
    }
  }
  if (options.evenWithoutFailedSteps)
    for (const n of Object.values(nodes)) if (GROUPS.has(n.type) && n.phase !== 'Succeeded' && n.phase !== 'Skipped') reset.add(n.id);
  for (const id of removed) reset.delete(id);
  const podsToDelete: string[] = [];
  const rerun: string[] = [];
  for (const id of removed) {
    const n = nodes[id]!;
    if (n.podName) podsToDelete.push(n.podName);
    if (!n.name.endsWith('.onExit') && !GROUPS.has(n.type) && n.type !== 'Container') rerun.push(n.displayName);
    delete nodes[id];
  }
  for (const id of reset) {
    const n = nodes[id]!;
    n.phase = 'Running';
    delete n.finishedAt;
    delete n.message;
    delete n.outputs;
  }
  for (const n of Object.values(nodes)) if (n.children) n.children = n.children.filter((c) => !removed.has(c));
  next.phase = 'Running';
  delete next.finishedAt;
  delete next.message;
  return { status: next, podsToDelete: podsToDelete.sort(), rerun: rerun.sort() };
}
