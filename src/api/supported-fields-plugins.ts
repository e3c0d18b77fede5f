/**
 * The records of `spec.executorPlugins` (workflow-level executor plugins) in THE list of
 * supported and refused fields (supported-fields.ts, which spreads these into its records).
 *
 * A workflow-level plugin is a `plugin.yaml` without apiVersion and kind, written into the
 * workflow; the same sidecar rules apply (src/plugins/workflow-plugins.ts checks them, naming the
 * field), and the container is checked field by field by the plugin shape (src/plugins/plugin-shape.ts),
 * so here it is a leaf.
 */
import { no, ok, rec, type FieldRule } from './field-rules.js';
import type { RecordName } from './supported-fields.js';

export const PLUGIN_RECORD_NAMES = ['ExecutorPlugin', 'ExecutorPluginMetadata', 'ExecutorPluginSpec', 'ExecutorPluginSidecar'] as const;

/** WorkflowSpec.executorPlugins. */
export const EXECUTOR_PLUGINS_FIELD: FieldRule = rec(
  'ExecutorPlugin',
  'list',
  "executor plugins declared in the workflow, run as sidecars of its agent pod; needs the controller's WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true (refused otherwise); when non-empty they replace the ConfigMap plugins for this workflow; the sidecar rules of plugin.yaml apply",
);

export const PLUGIN_RECORDS = {
  ExecutorPlugin: { metadata: rec('ExecutorPluginMetadata'), spec: rec('ExecutorPluginSpec') },
  ExecutorPluginMetadata: {
    name: ok("the plugin's name, a DNS label (its token is /var/run/workflow/token in its own sidecar, as for ConfigMap plugins)"),
    labels: ok('documentation only'),
    annotations: ok('documentation only (as on plugin.yaml: workflows.plugflow.io/description, workflows.plugflow.io/version)'),
    namespace: no("a workflow's plugins run in its own agent pod, in the workflow's namespace; leave namespace out"),
    generateName: no("a plugin needs a fixed name (metadata.name): it names the plugin's sidecar token and its calls"),
  },
  ExecutorPluginSpec: { sidecar: rec('ExecutorPluginSidecar') },
  ExecutorPluginSidecar: {
    container: ok(
      'the plugin server, a sidecar of the agent pod: ports, resources and a non-root runAsUser required; never privileged, no added capabilities, no privilege escalation, no volumeMounts (the rules of plugin.yaml)',
    ),
    automountServiceAccountToken: ok(
      "false only: a workflow-level plugin gets no Kubernetes API token (a token of the <name>-executor-plugin account would hand a plugin author's rights to whoever writes workflows)",
    ),
  },
} satisfies Partial<Record<RecordName, Record<string, FieldRule>>>;
