/**
 * Discovery: a labelled ConfigMap back into a plugin. A malformed ConfigMap yields an error with
 * every reason so the controller can log it and ignore the plugin (COMPAT.md "Discovery").
 *
 * The label is what makes a ConfigMap a plugin (spec document 000, discovery rule 3); its name
 * gives the plugin's name, without the `-executor-plugin` suffix `plugflow plugin build` adds
 * when it is there, and as it is when it is not (plugins published by others use both forms).
 */
import { readYamlDocument, YamlReadError } from '../yaml/kube-yaml.js';
import { CONFIGMAP_TYPE_EXECUTOR_PLUGIN, EXECUTOR_PLUGIN_SUFFIX, LABEL_CONFIGMAP_TYPE, type Container } from '../api/index.js';
import { DATA_SIDECAR_AUTOMOUNT, DATA_SIDECAR_CONTAINER } from './build-plugin.js';
import { PluginConfigMapError } from './errors.js';
import { containerShape } from './plugin-shape.js';
import { pluginNameProblems } from './read-plugin.js';
import { checkShape, withoutNulls } from './strict-shape.js';
import { validateSidecar } from './validate-sidecar.js';

/** A discovered plugin: what the registry and the agent pod builder work with. */
export interface PluginEntry {
  /** Namespace of the ConfigMap: the installation namespace or a workflow namespace. */
  namespace: string;
  /** Plugin name: the ConfigMap name without `-executor-plugin` when it ends so, else the ConfigMap name. */
  name: string;
  /** Name of the ConfigMap the plugin was read from; empty for a workflow-level plugin. */
  configMapName: string;
  /** For a workflow-level plugin (workflow-plugins.ts): the field declaring it, `spec.executorPlugins[0]`. */
  declaredAt?: string;
  container: Container;
  automountServiceAccountToken: boolean;
}

/** The fields of a V1ConfigMap this module reads (client-node's V1ConfigMap fits). */
export interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** True when a ConfigMap is labelled as an executor plugin (the discovery label selector). */
export function isPluginConfigMap(cm: ConfigMapLike): boolean {
  return cm.metadata?.labels?.[LABEL_CONFIGMAP_TYPE] === CONFIGMAP_TYPE_EXECUTOR_PLUGIN;
}

/** Parses a plugin ConfigMap; throws PluginConfigMapError with every reason. */
export function parsePluginConfigMap(cm: ConfigMapLike): PluginEntry {
  const namespace = cm.metadata?.namespace ?? '';
  const cmName = cm.metadata?.name ?? '';
  const problems: string[] = [];
  const fail = (): never => {
    throw new PluginConfigMapError(namespace, cmName, problems);
  };

  if (!namespace) problems.push('metadata.namespace is empty');
  if (!isPluginConfigMap(cm)) problems.push(`label ${LABEL_CONFIGMAP_TYPE} must be ${CONFIGMAP_TYPE_EXECUTOR_PLUGIN}`);
  const name = pluginNameOf(cmName);
  problems.push(...pluginNameProblems(name, name === cmName ? 'metadata.name (the plugin name)' : 'metadata.name (plugin name part)'));

  const automountText = cm.data?.[DATA_SIDECAR_AUTOMOUNT];
  let automount = false;
  if (automountText === 'true') automount = true;
  else if (automountText !== undefined && automountText !== 'false' && automountText !== '') {
    problems.push(`data["${DATA_SIDECAR_AUTOMOUNT}"] must be "true" or "false", got ${JSON.stringify(automountText)}`);
  }

  const containerText = cm.data?.[DATA_SIDECAR_CONTAINER];
  if (containerText === undefined || containerText.trim() === '') {
    problems.push(`data["${DATA_SIDECAR_CONTAINER}"] is missing`);
    fail();
  }
  let container: unknown;
  try {
    // Strict like the peer (a key given twice is an error), with kubectl's meaning of values.
    container = readYamlDocument(containerText!, `data["${DATA_SIDECAR_CONTAINER}"]`, { uniqueKeys: true, what: 'one container' });
  } catch (err) {
    if (!(err instanceof YamlReadError)) throw err;
    problems.push(`data["${DATA_SIDECAR_CONTAINER}"] is not valid YAML: ${err.detail}`);
    fail();
  }
  const at = `data["${DATA_SIDECAR_CONTAINER}"]`;
  const shapeProblems: string[] = [];
  checkShape(container, containerShape, at, shapeProblems);
  problems.push(...shapeProblems);
  if (shapeProblems.length === 0) container = withoutNulls(container);
  if (shapeProblems.length === 0) problems.push(...validateSidecar(container as Container, at).errors);
  if (problems.length > 0) fail();
  return { namespace, name, configMapName: cmName, container: container as Container, automountServiceAccountToken: automount };
}

/** The plugin name a ConfigMap name stands for: without `-executor-plugin` when it ends so. */
export function pluginNameOf(configMapName: string): string {
  return configMapName.endsWith(EXECUTOR_PLUGIN_SUFFIX) && configMapName.length > EXECUTOR_PLUGIN_SUFFIX.length
    ? configMapName.slice(0, -EXECUTOR_PLUGIN_SUFFIX.length)
    : configMapName;
}

/** Outcome of reading one ConfigMap during discovery: an entry, or the reason to log. */
export type PluginParseResult = { ok: true; entry: PluginEntry } | { ok: false; error: PluginConfigMapError };

export function tryParsePluginConfigMap(cm: ConfigMapLike): PluginParseResult {
  try {
    return { ok: true, entry: parsePluginConfigMap(cm) };
  } catch (err) {
    if (err instanceof PluginConfigMapError) return { ok: false, error: err };
    throw err;
  }
}
