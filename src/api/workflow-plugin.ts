/**
 * `spec.executorPlugins`: executor plugins declared in the workflow itself. A workflow-level
 * plugin is a `plugin.yaml` without apiVersion and kind; the same sidecar rules apply
 * (src/plugins/workflow-plugins.ts checks them, naming the field), and the container is checked
 * field by field by the plugin shape (src/plugins/plugin-shape.ts), so here it is a leaf. Each
 * record is declared once (record-declaration.ts).
 */
import type { Container, StringMap } from './container.js';
import { bool, openObject, str, stringMap } from './crd/schema-builders.js';
import { no, ok } from './field-rules.js';
import { field, record, ref, type RecordOf } from './record-declaration.js';

export const EXECUTOR_PLUGIN_SIDECAR_RECORD = record('ExecutorPluginSidecar', {
  /** The plugin server; resources and runAsNonRoot/runAsUser are mandatory. */
  container: field<Container>(
    openObject(),
    ok(
      'the plugin server, a sidecar of the agent pod: ports, resources and a non-root runAsUser required; never privileged, no added capabilities, no privilege escalation, no volumeMounts (the rules of plugin.yaml)',
    ),
  ).required(),
  /** Mount the plugin's own service account token (default false). */
  automountServiceAccountToken: field<boolean>(
    bool(),
    ok(
      "false only: a workflow-level plugin gets no Kubernetes API token (a token of the <name>-executor-plugin account would hand a plugin author's rights to whoever writes workflows)",
    ),
  ),
});
export interface ExecutorPluginSidecar extends RecordOf<typeof EXECUTOR_PLUGIN_SIDECAR_RECORD.fields> {}

export const EXECUTOR_PLUGIN_SPEC_RECORD = record('ExecutorPluginSpec', {
  sidecar: ref<ExecutorPluginSidecar>(EXECUTOR_PLUGIN_SIDECAR_RECORD).required(),
});
export interface ExecutorPluginSpec extends RecordOf<typeof EXECUTOR_PLUGIN_SPEC_RECORD.fields> {}

/** Kept open in the CRD so that the validator names a metadata field plugflow does not read. */
export const EXECUTOR_PLUGIN_METADATA_RECORD = record(
  'ExecutorPluginMetadata',
  {
    name: field<string>(
      str(),
      ok("the plugin's name, a DNS label (its token is /var/run/workflow/token in its own sidecar, as for ConfigMap plugins)"),
    ),
    labels: field<StringMap>(stringMap(), ok('documentation only')),
    annotations: field<StringMap>(
      stringMap(),
      ok('documentation only (as on plugin.yaml: workflows.plugflow.io/description, workflows.plugflow.io/version)'),
    ),
    namespace: field<string>(str(), no("a workflow's plugins run in its own agent pod, in the workflow's namespace; leave namespace out")),
    generateName: field<string>(
      str(),
      no("a plugin needs a fixed name (metadata.name): it names the plugin's sidecar token and its calls"),
    ),
  },
  { open: true },
);

/**
 * One entry of a workflow's `spec.executorPlugins`: the plugin declared in the workflow itself
 * (no apiVersion or kind), with the same sidecar rules as `plugin.yaml`. Only `metadata.name`
 * (the plugin's name), `labels` and `annotations` (documentation) are read from its metadata.
 */
export const EXECUTOR_PLUGIN_RECORD = record('ExecutorPlugin', {
  metadata: ref<RecordOf<typeof EXECUTOR_PLUGIN_METADATA_RECORD.fields>>(EXECUTOR_PLUGIN_METADATA_RECORD).required(),
  spec: ref<ExecutorPluginSpec>(EXECUTOR_PLUGIN_SPEC_RECORD).required(),
});
export interface WorkflowExecutorPlugin extends RecordOf<typeof EXECUTOR_PLUGIN_RECORD.fields> {}

/** WorkflowSpec.executorPlugins. */
export function executorPluginsField() {
  return ref<WorkflowExecutorPlugin[]>(
    EXECUTOR_PLUGIN_RECORD,
    'list',
    "executor plugins declared in the workflow, run as sidecars of its agent pod; needs the controller's WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true (refused otherwise); when non-empty they replace the ConfigMap plugins for this workflow; the sidecar rules of plugin.yaml apply",
    {
      extra: {
        description:
          "Executor plugins declared in the workflow (sidecars of its agent pod). Needs the controller's WORKFLOW_LEVEL_EXECUTOR_PLUGINS=true; when non-empty they replace the ConfigMap plugins for this workflow.",
      },
    },
  );
}
