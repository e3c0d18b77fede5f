/**
 * Plugin and http templates: run by the workflow's agent, through the WorkflowTaskSet.
 *
 * Life of a Plugin/HTTP node:
 *   created (Pending) → `writeTask` (the resolved template) and `ensureAgent`; both are emitted
 *   again on every reconcile until the agent reports the task;
 *   reported Pending/Running → the node follows (phase, message, progress);
 *   reported final → outputs are copied, the node ends with the reported phase, `removeTask`;
 *   the agent pod failed and is being replaced → the tasks it had taken (reported) end in Error
 *   with the reason, so a retry runs on the new pod; tasks it never reported wait for the new pod;
 *   the agent pod cannot be created (or keeps failing) → every unfinished task node ends in Error;
 *   a report that disappears after having been seen → Error (the result is lost, and running the
 *   task again could repeat a side effect, so the engine does not);
 *   deadline, timeout or workflow shutdown → Failed, `removeTask`.
 *
 * Plugin nodes need the executor plugin feature gate; with the gate off they fail at once with
 * a message that says how to turn it on. Http nodes do not need the gate. A plugin node whose
 * plugin the agent pod leaves out (it clashes with another plugin; Observations.excludedPlugins)
 * fails at once with the reason, instead of reaching an agent that does not know it.
 */
import { FEATURE_GATE_EXECUTOR_PLUGINS, type NodeStatus, type Template } from '../api/index.js';
import type { EngineRun } from './engine-run.js';
import { isFinal } from './node-phase.js';
import { newNode, type Execution } from './invocation.js';
import { leafLimitMessage, renderLeaf, succeedLeaf } from './leaf-render.js';

export const PLUGINS_DISABLED_MESSAGE =
  `executor plugins are disabled in this controller; to enable them set the environment variable ` +
  `${FEATURE_GATE_EXECUTOR_PLUGINS}=true on the workflow controller and restart it`;

export function executeTask(run: EngineRun, ex: Execution): NodeStatus | undefined {
  const isPlugin = ex.resolved.template.plugin !== undefined;
  let node = ex.existing;
  if (!node) {
    if (!run.canStart()) return undefined;
    if (isPlugin && !run.pluginsEnabled) {
      return run.createNode(newNode(ex.seed, 'Plugin', { phase: 'Failed', message: PLUGINS_DISABLED_MESSAGE }));
    }
    const excluded = isPlugin ? excludedPluginMessage(run, ex.resolved.template) : undefined;
    if (excluded) return run.createNode(newNode(ex.seed, 'Plugin', { phase: 'Failed', message: excluded }));
    node = run.createNode(newNode(ex.seed, isPlugin ? 'Plugin' : 'HTTP', { phase: 'Pending' }));
  }
  const leaf = renderLeaf(run, node, ex);
  if (!leaf.ok) return leaf.node;
  const { template } = leaf;
  const obs = run.tasks.get(node.id);
  const finished = obs !== undefined && isFinal(obs.phase);
  if (!finished) {
    if (isPlugin && !run.pluginsEnabled) {
      // The gate was turned off while the node ran (controller restarted without it).
      run.emit({ kind: 'removeTask', nodeId: node.id });
      return run.setPhase(node, 'Failed', PLUGINS_DISABLED_MESSAGE);
    }
    if (run.agent?.phase === 'Failed' && (!run.agent.replacing || obs !== undefined || node.observed)) {
      run.emit({ kind: 'removeTask', nodeId: node.id });
      return run.setPhase(node, 'Error', run.agent.message ?? 'the agent pod failed');
    }
    if (!obs && node.observed) {
      run.emit({ kind: 'removeTask', nodeId: node.id });
      return run.setPhase(node, 'Error', 'the agent report of this task disappeared before it finished');
    }
    const limit = leafLimitMessage(run, node, template, ex);
    if (limit !== undefined) {
      run.emit({ kind: 'removeTask', nodeId: node.id });
      return run.setPhase(node, 'Failed', limit);
    }
    if (!obs) {
      run.emit({ kind: 'writeTask', nodeId: node.id, template });
    } else {
      node.observed = true;
      run.setPhase(node, obs.phase, obs.message ?? '');
      if (obs.progress) node.progress = obs.progress;
    }
    run.emit({ kind: 'ensureAgent' });
    return node;
  }
  node.observed = true;
  run.emit({ kind: 'removeTask', nodeId: node.id });
  if (obs.progress) node.progress = obs.progress;
  if (obs.outputs) node.outputs = { ...obs.outputs };
  if (obs.phase !== 'Succeeded') return run.setPhase(node, obs.phase, obs.message ?? obs.phase);
  return succeedLeaf(run, node, leaf, obs.outputs, ex, obs.message ?? '');
}

/** Why the plugin a template names cannot run in this workflow's agent pod, or undefined. */
function excludedPluginMessage(run: EngineRun, template: Template): string | undefined {
  const section = template.plugin;
  if (!section || typeof section !== 'object') return undefined;
  for (const name of Object.keys(section)) {
    if (!Object.hasOwn(run.excludedPlugins, name)) continue;
    const reason = run.excludedPlugins[name];
    if (typeof reason === 'string') return `plugin ${JSON.stringify(name)} is not available to this workflow: ${reason}`;
  }
  return undefined;
}
