/**
 * `spec.executorPlugins` (workflow-level executor plugins) in the engine.
 *
 * - Validation (every caller: `plugflow lint`, the REST server, the controller): each plugin is
 *   read under the sidecar rules of ConfigMap plugins (src/plugins/workflow-plugins.ts), every
 *   problem naming its field.
 * - The gate (the controller only, which knows it): with WORKFLOW_LEVEL_EXECUTOR_PLUGINS off, a
 *   workflow declaring plugins is refused when it starts, naming the field and the gate — never
 *   run with the field ignored. The peer checks its gate only when it builds the agent pod; an
 *   empty list declares nothing there and here.
 * - The run: the workflow's own plugins replace the ConfigMap plugins for its agent pod (as in
 *   the peer), so its plugin steps run whether or not the ConfigMap gate is on, and the ConfigMap
 *   plugins' clashes (Observations.excludedPlugins) do not concern it.
 */
import { FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS, type WorkflowSpec } from '../api/index.js';
import { EXECUTOR_PLUGINS_FIELD_PATH, hasWorkflowPlugins, readWorkflowPlugins } from '../plugins/index.js';
import type { Observations } from './contract.js';

/** The message for spec.executorPlugins with the gate off (after the field's path). */
export const WORKFLOW_PLUGINS_DISABLED_DETAIL =
  `declares workflow-level executor plugins, which are disabled in this controller: set the environment variable ` +
  `${FEATURE_GATE_WORKFLOW_LEVEL_EXECUTOR_PLUGINS}=true (or pass --workflow-level-executor-plugins) on the workflow controller ` +
  `and restart it, or declare the plugins in ConfigMaps (plugflow plugin build) and remove spec.executorPlugins`;

/** Problems of the plugins `spec` declares (none when it declares none). */
export function checkExecutorPlugins(spec: WorkflowSpec, add: (field: string, detail: string) => void): void {
  if (!hasWorkflowPlugins(spec)) return;
  for (const p of readWorkflowPlugins(spec.executorPlugins, '').problems) add(p.field, p.detail);
}

/** The gate's refusal, when `spec` declares plugins and the controller does not allow them. */
export function checkExecutorPluginsGate(
  spec: WorkflowSpec,
  gate: Pick<Observations, 'workflowLevelPluginsEnabled'>,
  add: (field: string, detail: string) => void,
): void {
  if (hasWorkflowPlugins(spec) && gate.workflowLevelPluginsEnabled !== true)
    add(EXECUTOR_PLUGINS_FIELD_PATH, WORKFLOW_PLUGINS_DISABLED_DETAIL);
}

/**
 * The observations a run of `spec` sees: with its own plugins (and the gate on), plugins are on
 * for it and no ConfigMap plugin's exclusion applies.
 */
export function withWorkflowPlugins(observations: Observations, spec: WorkflowSpec): Observations {
  if (!hasWorkflowPlugins(spec) || observations.workflowLevelPluginsEnabled !== true) return observations;
  const { excludedPlugins: _excluded, ...rest } = observations;
  return { ...rest, pluginsEnabled: true };
}
