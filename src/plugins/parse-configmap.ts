/**
 * Discovery: a labelled ConfigMap back into a plugin. A malformed ConfigMap yields an error with
 * every reason so the controller can log it and ignore the plugin (COMPAT.md "Discovery").
 */
import { parse } from 'yaml';
import { CONFIGMAP_TYPE_EXECUTOR_PLUGIN, EXECUTOR_PLUGIN_SUFFIX, LABEL_CONFIGMAP_TYPE, type Container } from '../api/index.js';
import { DATA_SIDECAR_AUTOMOUNT, DATA_SIDECAR_CONTAINER } from './build-plugin.js';
import { PluginConfigMapError } from './errors.js';
import { containerShape } from './plugin-shape.js';
import { pluginNameProblems } from './read-plugin.js';
import { checkShape } from './strict-shape.js';
import { validateSidecar } from './validate-sidecar.js';

/** A discovered plugin: what the registry and the agent pod builder work with. */
export interface PluginEntry {
  /** Namespace of the ConfigMap: the installation namespace or a workflow namespace. */
  namespace: string;
  /** Plugin name: the ConfigMap name without `-executor-plugin`. */
  name: string;
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
  let name = '';
  if (!cmName.endsWith(EXECUTOR_PLUGIN_SUFFIX) || cmName.length === EXECUTOR_PLUGIN_SUFFIX.length) {
    problems.push(`metadata.name must be <plugin name>${EXECUTOR_PLUGIN_SUFFIX}`);
  } else {
    name = cmName.slice(0, -EXECUTOR_PLUGIN_SUFFIX.length);
    problems.push(...pluginNameProblems(name, 'metadata.name (plugin name part)'));
  }

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
    container = parse(containerText!, { uniqueKeys: true, version: '1.1' });
  } catch (err) {
    problems.push(`data["${DATA_SIDECAR_CONTAINER}"] is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    fail();
  }
  const at = `data["${DATA_SIDECAR_CONTAINER}"]`;
  const shapeProblems: string[] = [];
  checkShape(container, containerShape, at, shapeProblems);
  problems.push(...shapeProblems);
  if (shapeProblems.length === 0) problems.push(...validateSidecar(container as Container, at).errors);
  if (problems.length > 0) fail();
  return { namespace, name, container: container as Container, automountServiceAccountToken: automount };
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
