/**
 * Which plugins a workflow's agent pod runs (ensureAgent in action-applier.ts). The workflow is
 * the effective one (the reconciler hands the applier the spec with its WorkflowTemplate merged).
 *
 * - Its own plugins (spec.executorPlugins), when it declares some: they replace the ConfigMap
 *   plugins for this workflow, as in the peer — a ConfigMap plugin of the same name, in either
 *   namespace, is not in its agent pod, and neither is any other ConfigMap plugin. They are read
 *   again under the sidecar rules (src/plugins/workflow-plugins.ts: validation checked them when
 *   the workflow started; this holds whatever the workflow became since), and need the
 *   WORKFLOW_LEVEL_EXECUTOR_PLUGINS gate: with it turned off since, the agent pod is not built.
 * - Else the ConfigMap plugins of its namespace and the installation namespace (plugin-discovery.ts),
 *   when WORKFLOW_EXECUTOR_PLUGINS is on.
 */
import type { Workflow } from '../api/index.js';
import { WORKFLOW_PLUGINS_DISABLED_DETAIL } from '../engine/index.js';
import { EXECUTOR_PLUGINS_FIELD_PATH, hasWorkflowPlugins, workflowPluginEntries, type PluginEntry } from '../plugins/index.js';

export interface AgentPluginSources {
  pluginsEnabled: boolean;
  workflowLevelPluginsEnabled?: boolean;
  /** The ConfigMap plugins a workflow in this namespace gets. */
  pluginsFor(namespace: string): PluginEntry[];
  /** The agent pod's options: its own health port, which no plugin may use. */
  agent?: { healthPort?: number };
}

/** The plugins of `wf`'s agent pod; throws (the agent pod cannot be built) naming the field and the gate. */
export function agentPluginsOf(wf: Workflow, sources: AgentPluginSources): PluginEntry[] {
  const ns = wf.metadata.namespace ?? '';
  if (hasWorkflowPlugins(wf.spec)) {
    if (sources.workflowLevelPluginsEnabled !== true) throw new Error(`${EXECUTOR_PLUGINS_FIELD_PATH} ${WORKFLOW_PLUGINS_DISABLED_DETAIL}`);
    return workflowPluginEntries(wf.spec, ns, sources.agent?.healthPort);
  }
  return sources.pluginsEnabled ? sources.pluginsFor(ns) : [];
}
