/**
 * Suspend templates: a node that waits, Running, until it is resumed or its `duration` passes.
 *
 * - With `duration` (seconds, or `2m`, `1d`, …) the node succeeds on its own once that much time
 *   has passed since it started; the engine asks to be requeued at that moment.
 * - Without `duration` it waits for a resume: `resumeWorkflow` (resume.ts, used by `plugflow
 *   resume`) marks the node Succeeded in the status, filling output parameters declared with
 *   `valueFrom.supplied` from the values given (or their defaults). The engine sees a finished node
 *   on the next reconcile and goes on.
 *
 * The node carries its declared output parameters from the start (without values) so that resume
 * knows what may be supplied without having to find the template.
 */
import { parseSecondsOrDuration, type NodeStatus, type Parameter } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { toMs } from './node-phase.js';
import { hasTags, renderLeafTemplate, valueSource } from './expressions.js';
import type { Vars } from './variables.js';
import { newNode, type Execution } from './invocation.js';
import { leafVariables } from './leaf-render.js';
import { leafLimitReached } from './leaf-deadline.js';
import { collectOutputs } from './outputs.js';
import { errorMessage } from '../log/error-message.js';

export function executeSuspend(run: EngineRun, ex: Execution): NodeStatus | undefined {
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    node = run.createNode(newNode(ex.seed, 'Suspend', { phase: 'Running' }));
    const declared = ex.resolved.template.outputs?.parameters ?? [];
    if (declared.length > 0) node.outputs = { parameters: declared.map(declaredOnly) };
  }
  // The variables are built only when used: a template without tags (a loop's 100,000 waiting
  // items) is read as it is, and outputs are collected once, when it ends.
  let vars: Vars | undefined;
  const variables = (): Vars => (vars ??= leafVariables(run, node, ex));
  try {
    const given = ex.resolved.template;
    const template = hasTags(given) ? renderLeafTemplate(given, variables(), ex.where, ex.seed.inputs) : given;
    const limit = leafLimitReached(run, node, template, ex.timing, ex.where);
    if (limit !== undefined) return run.setPhase(node, 'Failed', limit);
    const duration = template.suspend?.duration;
    if (duration === undefined || duration === '') return node;
    const end = toMs(node.startedAt, run.nowMs) + parseSecondsOrDuration(duration, { field: `${ex.where}.suspend.duration` });
    if (run.nowMs < end) {
      run.requeueAt(end);
      return node;
    }
    if (template.outputs !== undefined) {
      const collected = collectOutputs(template.outputs, node.outputs, valueSource(variables()), ex.where);
      if (!collected.ok) return run.setPhase(node, 'Error', collected.error);
      if (collected.outputs.parameters) node.outputs = collected.outputs;
    }
    return run.setPhase(node, 'Succeeded', '');
  } catch (err) {
    return run.setPhase(node, 'Error', errorMessage(err));
  }
}

/** A declared output parameter without its value, as kept on a waiting suspend node. */
function declaredOnly(p: Parameter): Parameter {
  const out: Parameter = { name: p.name };
  if (p.valueFrom) out.valueFrom = p.valueFrom;
  if (p.default !== undefined) out.default = p.default;
  if (p.enum) out.enum = p.enum;
  if (p.globalName) out.globalName = p.globalName;
  return out;
}
