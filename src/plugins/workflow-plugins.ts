/**
 * Workflow-level executor plugins: `spec.executorPlugins`, plugins a workflow declares itself
 * (the peer's field, behind its controller gate ARGO_WORKFLOW_LEVEL_EXECUTOR_PLUGINS; plugflow's
 * is WORKFLOW_LEVEL_EXECUTOR_PLUGINS). Pure.
 *
 * Each entry is read into the PluginEntry a discovered ConfigMap gives, under the same rules:
 * the plugin name is a DNS label, the container has the strict shape of plugin.yaml
 * (plugin-shape.ts) and passes every sidecar rule (validate-sidecar.ts: ports, resources,
 * non-root runAsUser, never privileged, no added capabilities, no privilege escalation, no
 * volumeMounts, no literal secrets). The agent pod builder and the pod policy check them again.
 *
 * Two rules are stricter than for ConfigMap plugins, because whoever writes a workflow is not a
 * plugin author whom a namespace admin trusted:
 * - `automountServiceAccountToken: true` is refused: the plugin's account `<name>-executor-plugin`
 *   belongs to the ConfigMap plugin of that name (step pods may not run as it either, README
 *   "Pod security"); a workflow-level plugin gets its own plugin token and nothing else;
 * - a clash between two of the workflow's plugins (name, container name, port, the agent's
 *   health port) is an error of the workflow, not a plugin left out: the workflow names them all.
 *
 * Problems name the field (`spec.executorPlugins[0].spec.sidecar.container.securityContext.runAsUser`)
 * and say what is wrong, as every validation message does.
 */
import { isJsonObject, type Container } from '../api/index.js';
import { DEFAULT_AGENT_HEALTH_PORT } from './agent-names.js';
import type { PluginEntry } from './parse-configmap.js';
import { containerShape } from './plugin-shape.js';
import { pluginNameProblems } from './read-plugin.js';
import { checkShape, withoutNulls } from './strict-shape.js';
import { SIDECAR_INVALID, validateSidecar } from './validate-sidecar.js';

/** One problem of spec.executorPlugins: the field, and what is wrong with it. */
export interface WorkflowPluginProblem {
  field: string;
  detail: string;
}

export interface WorkflowPlugins {
  /** The valid plugins, in the order declared. */
  entries: PluginEntry[];
  problems: WorkflowPluginProblem[];
}

export const EXECUTOR_PLUGINS_FIELD_PATH = 'spec.executorPlugins';

/** The message for `automountServiceAccountToken: true` on a workflow-level plugin. */
export const WORKFLOW_PLUGIN_TOKEN_DETAIL =
  'must be false or absent: a plugin declared in a workflow gets no Kubernetes API token (the <name>-executor-plugin account belongs to ' +
  'the ConfigMap plugin of that name, whose author a namespace admin trusted); declare the plugin in a ConfigMap (plugflow plugin build) if it needs one';

/** True when `spec` declares at least one workflow-level plugin (an empty list declares none, as in the peer). */
export function hasWorkflowPlugins(spec: { executorPlugins?: unknown } | undefined): boolean {
  const list = spec?.executorPlugins;
  return list !== undefined && list !== null && !(Array.isArray(list) && list.length === 0);
}

/**
 * Reads `spec.executorPlugins` of a workflow in `namespace`. `healthPort` is the agent's own port,
 * which no plugin may use.
 */
export function readWorkflowPlugins(list: unknown, namespace: string, opts: { at?: string; healthPort?: number } = {}): WorkflowPlugins {
  const at = opts.at ?? EXECUTOR_PLUGINS_FIELD_PATH;
  const problems: WorkflowPluginProblem[] = [];
  const add = (field: string, detail: string) => problems.push({ field, detail });
  if (list === undefined || list === null) return { entries: [], problems };
  if (!Array.isArray(list)) {
    add(at, 'must be a list of executor plugins (metadata.name and spec.sidecar.container each)');
    return { entries: [], problems };
  }
  const entries: PluginEntry[] = [];
  list.forEach((item, i) => {
    const entry = readOne(item, `${at}[${i}]`, namespace, add);
    if (entry) entries.push(entry);
  });
  checkClashes(entries, opts.healthPort ?? DEFAULT_AGENT_HEALTH_PORT, add);
  return { entries, problems };
}

/**
 * The plugins of a workflow's agent pod from its spec.executorPlugins; throws an Error naming
 * every problem (the controller checks again what validation checked when the workflow started).
 */
export function workflowPluginEntries(spec: { executorPlugins?: unknown }, namespace: string, healthPort?: number): PluginEntry[] {
  const read = readWorkflowPlugins(spec.executorPlugins, namespace, healthPort !== undefined ? { healthPort } : {});
  if (read.problems.length > 0) throw new Error(read.problems.map((p) => `${p.field} ${p.detail}`).join('; '));
  return read.entries;
}

function readOne(item: unknown, p: string, namespace: string, add: (field: string, detail: string) => void): PluginEntry | undefined {
  if (!isJsonObject(item)) {
    add(p, 'must be an object with metadata.name and spec.sidecar.container');
    return undefined;
  }
  let ok = true;
  const fail = (field: string, detail: string) => {
    ok = false;
    add(field, detail);
  };
  const metadata = isJsonObject(item.metadata) ? item.metadata : {};
  const name = metadata.name;
  if (typeof name !== 'string' || name === '') fail(`${p}.metadata.name`, "is required: the plugin's name, a DNS label");
  else for (const problem of pluginNameProblems(name, `${p}.metadata.name`)) split(problem, ': ', fail);

  const sidecar = isJsonObject(item.spec) && isJsonObject(item.spec.sidecar) ? item.spec.sidecar : undefined;
  if (!sidecar) {
    fail(`${p}.spec.sidecar`, 'is required: the plugin server container (spec.sidecar.container)');
    return undefined;
  }
  const automount = sidecar.automountServiceAccountToken;
  if (automount === true) fail(`${p}.spec.sidecar.automountServiceAccountToken`, WORKFLOW_PLUGIN_TOKEN_DETAIL);
  else if (automount !== undefined && automount !== null && automount !== false)
    fail(`${p}.spec.sidecar.automountServiceAccountToken`, `must be false or absent, got ${JSON.stringify(automount)}`);

  const at = `${p}.spec.sidecar.container`;
  if (sidecar.container === undefined || sidecar.container === null) {
    fail(at, 'is required: the plugin server (name, image, ports, resources, securityContext)');
    return undefined;
  }
  const shape: string[] = [];
  checkShape(sidecar.container, containerShape, at, shape);
  for (const problem of shape) split(problem, ': ', fail);
  if (shape.length > 0) return undefined;
  const container = withoutNulls(sidecar.container) as Container;
  for (const error of validateSidecar(container, at).errors) split(error.slice(SIDECAR_INVALID.length + 1), ' ', fail);
  if (!ok) return undefined;
  return { namespace, name: name as string, configMapName: '', declaredAt: p, container, automountServiceAccountToken: false };
}

/** Splits `<field><sep><detail>` (the forms checkShape and validateSidecar write) into a problem. */
function split(text: string, sep: string, add: (field: string, detail: string) => void): void {
  const i = text.indexOf(sep);
  if (i < 0) add(text, 'is invalid');
  else add(text.slice(0, i), text.slice(i + sep.length));
}

/** Names, container names and ports are shared by every plugin of one agent pod. */
function checkClashes(entries: readonly PluginEntry[], healthPort: number, add: (field: string, detail: string) => void): void {
  const names = new Map<string, PluginEntry>();
  const containers = new Map<string, PluginEntry>();
  const ports = new Map<number, PluginEntry>();
  for (const e of entries) {
    const prev = names.get(e.name);
    if (prev) add(`${e.declaredAt}.metadata.name`, `"${e.name}" is also the name of ${prev.declaredAt}; plugin names are unique`);
    else names.set(e.name, e);
    const cname = e.container.name ?? '';
    const owner = containers.get(cname);
    if (owner)
      add(
        `${e.declaredAt}.spec.sidecar.container.name`,
        `"${cname}" is also the container name of ${owner.declaredAt} (plugin ${owner.name}); the plugins share one agent pod: rename the container`,
      );
    else containers.set(cname, e);
    (e.container.ports ?? []).forEach((port, k) => {
      const field = `${e.declaredAt}.spec.sidecar.container.ports[${k}].containerPort`;
      const holder = ports.get(port.containerPort);
      if (port.containerPort === healthPort) add(field, `${port.containerPort} is the agent's health port; choose another port`);
      else if (holder && holder !== e)
        add(
          field,
          `${port.containerPort} is also a port of ${holder.declaredAt} (plugin ${holder.name}); the plugins of an agent pod share its network: choose another port`,
        );
      else ports.set(port.containerPort, e);
    });
  }
}
