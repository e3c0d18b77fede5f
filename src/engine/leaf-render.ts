/**
 * What the leaves whose work runs outside the engine (pods: execute-pod.ts; agent tasks:
 * execute-task.ts) share: their variables, their template rendered with them, the deadline or
 * timeout they may have reached, and the declared outputs collected once the work succeeded.
 * One place, so a pod and an agent task render, time out and collect outputs the same way.
 */
import type { NodeStatus, Outputs, Template } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { renderLeafTemplate, valueSource } from './expressions.js';
import { templateVariables, type Execution } from './invocation.js';
import { leafLimitReached } from './leaf-deadline.js';
import { collectOutputs } from './outputs.js';
import type { Vars } from './variables.js';
import { errorMessage } from '../log/error-message.js';

/** Variables of a leaf template: globals, inputs, `pod.name`, `node.name`, `retries`, `lastRetry.*`. */
export function leafVariables(run: EngineRun, node: NodeStatus, ex: Execution, podName = node.podName): Vars {
  const vars = templateVariables(run.globals, ex);
  vars['node.name'] = node.name;
  if (podName) vars['pod.name'] = podName;
  if (ex.retries !== undefined) vars.retries = String(ex.retries);
  for (const [k, v] of Object.entries(ex.lastRetry ?? {})) vars[`lastRetry.${k}`] = v;
  return vars;
}

export type RenderedLeaf = { ok: true; vars: Vars; template: Template } | { ok: false; node: NodeStatus };

/**
 * The leaf's variables and its rendered template (`podName`: what `pod.name` holds, by default the
 * node's pod); a template that cannot be rendered ends the node in Error with the reason. */
export function renderLeaf(run: EngineRun, node: NodeStatus, ex: Execution, podName = node.podName): RenderedLeaf {
  const vars = leafVariables(run, node, ex, podName);
  try {
    return { ok: true, vars, template: renderLeafTemplate(ex.resolved.template, vars, ex.where, ex.seed.inputs) };
  } catch (err) {
    return { ok: false, node: run.setPhase(node, 'Error', errorMessage(err)) };
  }
}

/** The message to fail the unfinished leaf with (a limit reached, or a limit that cannot be read), else undefined. */
export function leafLimitMessage(run: EngineRun, node: NodeStatus, template: Template, ex: Execution): string | undefined {
  try {
    return leafLimitReached(run, node, template, ex.timing, ex.where);
  } catch (err) {
    return errorMessage(err);
  }
}

/** Ends a leaf whose work succeeded: its declared outputs from what was reported, or Error when one cannot be collected. */
export function succeedLeaf(
  run: EngineRun,
  node: NodeStatus,
  leaf: { vars: Vars; template: Template },
  reported: Outputs | undefined,
  ex: Execution,
  message: string,
): NodeStatus {
  const collected = collectOutputs(leaf.template.outputs, reported, valueSource(leaf.vars), ex.where);
  if (!collected.ok) return run.setPhase(node, 'Error', collected.error);
  node.outputs = collected.outputs;
  return run.setPhase(node, 'Succeeded', message);
}
