/**
 * Reads `plugin.yaml` strictly: YAML errors, duplicate keys, unknown fields, wrong types, a
 * wrong apiVersion/kind, label and annotation rules and every sidecar rule are reported
 * together, each naming the field. Values mean what they mean to kubectl (YAML 1.1:
 * `runAsNonRoot: yes` is true), read by the one YAML reader (src/yaml); a key given twice is an
 * error, as in the peer's strict reading of this file.
 */
import { API_VERSION, type ExecutorPlugin } from '../api/index.js';
import { annotationProblems, labelProblems } from '../api/index.js';
import { readYamlDocuments, YamlReadError } from '../yaml/kube-yaml.js';
import { DATA_SIDECAR_CONTAINER } from './build-plugin.js';
import { PluginBuildError } from './errors.js';
import { executorPluginShape, WRITTEN_METADATA_FIELDS } from './plugin-shape.js';
import { checkShape, isPlainObject, withoutNulls } from './strict-shape.js';
import { validateSidecar } from './validate-sidecar.js';

/** A plugin name is a DNS label: it becomes part of ConfigMap, service account and volume names. */
export const PLUGIN_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Longest plugin name whose `<name>-executor-plugin` still fits a 63-character label. */
export const MAX_PLUGIN_NAME = 63 - '-executor-plugin'.length;

/** What plugin.yaml is, for messages that tell a user holding the wrong file what to do. */
const WHAT_BUILD_READS =
  `plugflow plugin build reads an ExecutorPlugin declaration (apiVersion: ${API_VERSION}, kind: ExecutorPlugin, ` +
  'metadata.name, spec.sidecar.container; see examples/plugins) and writes the ConfigMap from it';

export interface ReadPlugin {
  plugin: ExecutorPlugin;
  warnings: string[];
}

/** Parses and validates the text of `plugin.yaml`; throws PluginBuildError listing every problem. */
export function readPluginYaml(text: string, source = 'plugin.yaml'): ReadPlugin {
  const value = onlyDocument(text, source);
  const problems: string[] = [];
  const wrongKind = kindProblem(value);
  checkShape(value, executorPluginShape, '', problems);
  // A document of another kind has fields a plugin does not: name the kind, not each field.
  if (wrongKind && (problems.length > 0 || !isPlainObject(value))) throw new PluginBuildError(source, [wrongKind]);
  if (problems.length > 0) throw new PluginBuildError(source, problems);

  const plugin = withoutNulls(value) as ExecutorPlugin;
  if (plugin.apiVersion !== API_VERSION) problems.push(`apiVersion: must be ${API_VERSION}, got ${JSON.stringify(plugin.apiVersion)}`);
  if (wrongKind) problems.push(wrongKind);
  problems.push(...pluginNameProblems(plugin.metadata.name ?? '', 'metadata.name'));
  problems.push(...labelProblems(plugin.metadata.labels, 'metadata.labels'));
  problems.push(...annotationProblems(plugin.metadata.annotations, 'metadata.annotations'));
  const sidecar = validateSidecar(plugin.spec.sidecar.container, 'spec.sidecar.container');
  problems.push(...sidecar.errors);
  if (problems.length > 0) throw new PluginBuildError(source, problems);
  return { plugin: keepWrittenMetadata(plugin), warnings: [...unwrittenMetadataWarnings(plugin), ...sidecar.warnings] };
}

/** The one document of plugin.yaml; empty files and several documents say what to do. */
function onlyDocument(text: string, source: string): unknown {
  let docs: unknown[];
  try {
    docs = readYamlDocuments(text, source, { uniqueKeys: true });
  } catch (err) {
    if (err instanceof YamlReadError) throw new PluginBuildError(source, [err.detail]);
    throw err;
  }
  if (docs.length === 0) throw new PluginBuildError(source, [`is empty; ${WHAT_BUILD_READS}`]);
  if (docs.length > 1) {
    throw new PluginBuildError(source, [
      `holds ${docs.length} YAML documents (${docs.map(describeDocument).join(', ')}); plugin.yaml declares exactly one ExecutorPlugin: ` +
        'keep the ExecutorPlugin and move the other documents to files of their own',
    ]);
  }
  return docs[0];
}

function describeDocument(doc: unknown): string {
  if (!isPlainObject(doc)) return Array.isArray(doc) ? 'a list' : JSON.stringify(doc);
  const kind = typeof doc.kind === 'string' ? doc.kind : 'no kind';
  const name = isPlainObject(doc.metadata) && typeof doc.metadata.name === 'string' ? ` "${doc.metadata.name}"` : '';
  return `${kind}${name}`;
}

/** A document of another kind: say what it is and what to do, instead of listing its fields as unknown. */
function kindProblem(value: unknown): string | undefined {
  if (!isPlainObject(value))
    return `must be a mapping (an ExecutorPlugin), got ${Array.isArray(value) ? 'a list' : JSON.stringify(value)}; ${WHAT_BUILD_READS}`;
  const kind = value.kind;
  if (kind === undefined || kind === null || kind === 'ExecutorPlugin') return undefined;
  if (kind === 'ConfigMap') {
    const data = isPlainObject(value.data) ? value.data : {};
    const built = DATA_SIDECAR_CONTAINER in data;
    return (
      `kind: this is a ConfigMap (kind: ConfigMap)${built ? ', already a built plugin' : ''}, not a plugin declaration; ${WHAT_BUILD_READS}. ` +
      (built
        ? 'To install this one, run kubectl apply -f on it; to change it, edit its plugin.yaml and build again'
        : 'Write a plugin.yaml of kind ExecutorPlugin')
    );
  }
  return `kind: must be ExecutorPlugin, got ${JSON.stringify(kind)}; ${WHAT_BUILD_READS}`;
}

/** ObjectMeta fields other than name, namespace, labels and annotations are not written: say so. */
function unwrittenMetadataWarnings(plugin: ExecutorPlugin): string[] {
  return Object.entries(plugin.metadata)
    .filter(([k, v]) => !WRITTEN_METADATA_FIELDS.includes(k) && v !== '' && !(Array.isArray(v) && v.length === 0))
    .map(
      ([k]) => `metadata.${k} is not written to the ConfigMap (only ${WRITTEN_METADATA_FIELDS.join(', ')} are); remove it from plugin.yaml`,
    );
}

function keepWrittenMetadata(plugin: ExecutorPlugin): ExecutorPlugin {
  const metadata = Object.fromEntries(Object.entries(plugin.metadata).filter(([k]) => WRITTEN_METADATA_FIELDS.includes(k)));
  return { ...plugin, metadata };
}

export function pluginNameProblems(name: string, field: string): string[] {
  if (!PLUGIN_NAME.test(name)) {
    return [`${field}: "${name}" must be a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit)`];
  }
  if (name.length > MAX_PLUGIN_NAME) return [`${field}: "${name}" is longer than ${MAX_PLUGIN_NAME} characters`];
  return [];
}
