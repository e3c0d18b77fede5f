/**
 * Reads `plugin.yaml` strictly: YAML errors, duplicate keys, unknown fields, wrong types, a
 * wrong apiVersion/kind and every sidecar rule are reported together, each naming the field.
 */
import { parseDocument } from 'yaml';
import { API_VERSION, type ExecutorPlugin } from '../api/index.js';
import { PluginBuildError } from './errors.js';
import { executorPluginShape } from './plugin-shape.js';
import { checkShape } from './strict-shape.js';
import { validateSidecar } from './validate-sidecar.js';

/** A plugin name is a DNS label: it becomes part of ConfigMap, service account and volume names. */
export const PLUGIN_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Longest plugin name whose `<name>-executor-plugin` still fits a 63-character label. */
export const MAX_PLUGIN_NAME = 63 - '-executor-plugin'.length;

export interface ReadPlugin {
  plugin: ExecutorPlugin;
  warnings: string[];
}

/** Parses and validates the text of `plugin.yaml`; throws PluginBuildError listing every problem. */
export function readPluginYaml(text: string, source = 'plugin.yaml'): ReadPlugin {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new PluginBuildError(
      source,
      doc.errors.map((e) => `line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`),
    );
  }
  const value: unknown = doc.toJS();
  const problems: string[] = [];
  checkShape(value, executorPluginShape, '', problems);
  if (problems.length > 0) throw new PluginBuildError(source, problems);

  const plugin = value as ExecutorPlugin;
  if (plugin.apiVersion !== API_VERSION) problems.push(`apiVersion: must be ${API_VERSION}, got ${JSON.stringify(plugin.apiVersion)}`);
  if (plugin.kind !== 'ExecutorPlugin') problems.push(`kind: must be ExecutorPlugin, got ${JSON.stringify(plugin.kind)}`);
  problems.push(...pluginNameProblems(plugin.metadata.name ?? '', 'metadata.name'));
  const sidecar = validateSidecar(plugin.spec.sidecar.container, 'spec.sidecar.container');
  problems.push(...sidecar.errors);
  if (problems.length > 0) throw new PluginBuildError(source, problems);
  return { plugin, warnings: sidecar.warnings };
}

export function pluginNameProblems(name: string, field: string): string[] {
  if (!PLUGIN_NAME.test(name)) {
    return [`${field}: "${name}" must be a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit)`];
  }
  if (name.length > MAX_PLUGIN_NAME) return [`${field}: "${name}" is longer than ${MAX_PLUGIN_NAME} characters`];
  return [];
}
