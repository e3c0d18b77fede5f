/**
 * Which plugins a workflow gets, and what changed between two discovery snapshots. Pure.
 *
 * Precedence (spec document 000, discovery rule 2): plugins come from the workflow's namespace
 * and the installation namespace; on a name clash only the workflow namespace's plugin is
 * loaded. The result is sorted by name so the call order and the agent pod are deterministic
 * (the peer loads both plugins of a clash in random order).
 *
 * All plugins of a workflow share one agent pod, so two of them cannot have the same container
 * name or listen on the same port. One ConfigMap that clashes with another must not make every
 * agent pod of the namespace impossible: selectAgentPlugins keeps one plugin of each clash by a
 * fixed rule and leaves the other out, with the reason (logged once by the controller, and given
 * to any step that names the left-out plugin).
 */
import { isDeepStrictEqual } from 'node:util';
import { DATA_SIDECAR_CONTAINER, pluginConfigMapName } from './build-plugin.js';
import type { PluginEntry } from './parse-configmap.js';

export interface PluginScope {
  /** Namespace of the workflow. */
  workflowNamespace: string;
  /** Namespace where plugflow is installed (shared plugins live there). */
  installNamespace: string;
}

/** The plugins of a workflow, sorted by name; the workflow namespace wins a name clash. */
export function pluginsForWorkflow(entries: Iterable<PluginEntry>, scope: PluginScope): PluginEntry[] {
  const byName = new Map<string, PluginEntry>();
  for (const e of entries) {
    if (e.namespace !== scope.workflowNamespace && e.namespace !== scope.installNamespace) continue;
    const held = byName.get(e.name);
    if (!held || rankBefore(rank(e, scope), rank(held, scope))) byName.set(e.name, e);
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Which of two plugins of one name a workflow gets (lower first): the workflow namespace's, then,
 * in one namespace, the ConfigMap named `<name>-executor-plugin` (`hello` and
 * `hello-executor-plugin` both define plugin `hello`), then the first ConfigMap name.
 */
function rank(e: PluginEntry, scope: PluginScope): [number, number, string] {
  return [e.namespace === scope.workflowNamespace ? 0 : 1, e.configMapName === pluginConfigMapName(e.name) ? 0 : 1, e.configMapName];
}

function rankBefore(a: [number, number, string], b: [number, number, string]): boolean {
  return a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] < b[2];
}

/**
 * Plugins left out because another ConfigMap of the same namespace defines a plugin of the same
 * name (see rank); each is reported like a clash, naming both ConfigMaps.
 */
export function shadowedPlugins(entries: Iterable<PluginEntry>): ExcludedPlugin[] {
  const best = new Map<string, PluginEntry>();
  const all = [...entries];
  const scopeOf = (e: PluginEntry): PluginScope => ({ workflowNamespace: e.namespace, installNamespace: e.namespace });
  for (const e of all) {
    const k = key(e);
    const held = best.get(k);
    if (!held || rankBefore(rank(e, scopeOf(e)), rank(held, scopeOf(e)))) best.set(k, e);
  }
  return all
    .filter((e) => best.get(key(e)) !== e)
    .map((e) => {
      const kept = best.get(key(e))!;
      return {
        plugin: e,
        field: 'metadata.name',
        keptInstead: kept,
        reason:
          `ConfigMap ${pluginConfigMapKey(e)} is left out of agent pods: it defines plugin ${e.name}, as ConfigMap ${pluginConfigMapKey(kept)} does, ` +
          `which is kept because ${kept.configMapName === pluginConfigMapName(kept.name) ? `it is named ${pluginConfigMapName(kept.name)}` : 'its name comes first'}; delete one of them`,
      };
    });
}

/** A plugin left out of a workflow's agent pod, and why. */
export interface ExcludedPlugin {
  plugin: PluginEntry;
  /** The ConfigMap field at fault, e.g. `data["sidecar.container"].name`. */
  field: string;
  /** The plugin kept instead, when the reason is a clash with it. */
  keptInstead?: PluginEntry;
  /** The reason, naming both ConfigMaps and the field. */
  reason: string;
}

export interface PluginSelection {
  /** The plugins of the agent pod, sorted by name. */
  plugins: PluginEntry[];
  /** The plugins left out, in the order they were considered. */
  excluded: ExcludedPlugin[];
}

/** `ns/<ConfigMap name>`: the ConfigMap a plugin was discovered from. */
export function pluginConfigMapKey(p: Pick<PluginEntry, 'namespace' | 'configMapName'>): string {
  return `${p.namespace}/${p.configMapName}`;
}

/** True when the plugin's container is named after the plugin (the convention `plugin build` follows). */
function ownsContainerName(p: PluginEntry): boolean {
  return p.container.name === p.name;
}

/**
 * The plugins of one workflow that can share its agent pod (input: pluginsForWorkflow's result).
 *
 * Plugins are considered in a fixed order and each is kept unless what it needs is already
 * taken by a kept one: its container name, one of its ports, or `healthPort` (the agent's own).
 * The order: plugins whose container is named after them first (on a container-name clash the
 * plugin whose name it is wins), then by plugin name, then by namespace. The outcome depends
 * only on the set of plugins, never on the order ConfigMaps arrived in.
 */
export function selectAgentPlugins(plugins: Iterable<PluginEntry>, opts: { healthPort?: number } = {}): PluginSelection {
  const ordered = [...plugins].sort(
    (a, b) => Number(ownsContainerName(b)) - Number(ownsContainerName(a)) || compare(a.name, b.name) || compare(a.namespace, b.namespace),
  );
  const names = new Map<string, PluginEntry>();
  const ports = new Map<number, PluginEntry>();
  const kept: PluginEntry[] = [];
  const excluded: ExcludedPlugin[] = [];
  const at = `data["${DATA_SIDECAR_CONTAINER}"]`;
  for (const p of ordered) {
    const leaveOut = (field: string, why: string, keptInstead?: PluginEntry): void => {
      excluded.push({
        plugin: p,
        field,
        ...(keptInstead ? { keptInstead } : {}),
        reason: `ConfigMap ${pluginConfigMapKey(p)} is left out of agent pods: ${why}`,
      });
    };
    const cname = p.container.name ?? '';
    const owner = names.get(cname);
    if (owner) {
      leaveOut(
        `${at}.name`,
        `its ${at}.name "${cname}" is also the container name of plugin ${owner.namespace}/${owner.name} (ConfigMap ${pluginConfigMapKey(owner)}), ${whyKept(owner, p)}; rename the container`,
        owner,
      );
      continue;
    }
    const portList = p.container.ports ?? [];
    const busy = portList.findIndex((port) => port.containerPort === opts.healthPort || ports.has(port.containerPort));
    if (busy >= 0) {
      const n = portList[busy]!.containerPort;
      const holder = ports.get(n);
      const field = `${at}.ports[${busy}].containerPort`;
      if (!holder) leaveOut(field, `its ${field} ${n} is the agent's health port; choose another port`);
      else
        leaveOut(
          field,
          `its ${field} ${n} is also a port of plugin ${holder.namespace}/${holder.name} (ConfigMap ${pluginConfigMapKey(holder)}), ${whyKept(holder, p)}; the plugins of an agent pod share its network, choose another port`,
          holder,
        );
      continue;
    }
    names.set(cname, p);
    for (const port of portList) ports.set(port.containerPort, p);
    kept.push(p);
  }
  return { plugins: kept.sort((a, b) => compare(a.name, b.name) || compare(a.namespace, b.namespace)), excluded };
}

/**
 * Every plugin left out of some workflow's agent pod, across namespaces: a workflow namespace
 * sees its own plugins and the installation namespace's. A clash between the same two plugins
 * is listed once however many namespaces see it.
 */
export function excludedPlugins(
  entries: Iterable<PluginEntry>,
  installNamespace: string,
  opts: { healthPort?: number } = {},
): ExcludedPlugin[] {
  const all = [...entries];
  const namespaces = [...new Set([installNamespace, ...all.map((e) => e.namespace)])].sort();
  const out = new Map<string, ExcludedPlugin>();
  for (const x of shadowedPlugins(all)) out.set(exclusionKey(x), x);
  for (const ns of namespaces) {
    for (const x of selectAgentPlugins(pluginsForWorkflow(all, { workflowNamespace: ns, installNamespace }), opts).excluded) {
      const k = exclusionKey(x);
      if (!out.has(k)) out.set(k, x);
    }
  }
  return [...out.values()];
}

/** Identifies one exclusion (plugin and reason) for "report once". */
export function exclusionKey(x: ExcludedPlugin): string {
  return `${pluginConfigMapKey(x.plugin)}|${x.reason}`;
}

/** Why `kept` won over `left` (see the order in selectAgentPlugins). */
function whyKept(kept: PluginEntry, left: PluginEntry): string {
  if (ownsContainerName(kept) && !ownsContainerName(left)) return 'which is kept because its container is named after it';
  return kept.name !== left.name
    ? 'which is kept because it comes first by plugin name'
    : 'which is kept because its namespace comes first';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Warnings for plugins of one workflow that listen on the same port: they share the agent pod's
 * network namespace, so only one of them could bind it. The agent pod builder refuses them
 * (selectAgentPlugins keeps them from getting there).
 */
export function portClashes(plugins: readonly PluginEntry[]): string[] {
  const owner = new Map<number, PluginEntry>();
  const out: string[] = [];
  for (const p of plugins) {
    for (const port of p.container.ports ?? []) {
      const prev = owner.get(port.containerPort);
      if (prev && prev !== p) {
        out.push(`port ${port.containerPort} is used by plugin ${prev.namespace}/${prev.name} and plugin ${p.namespace}/${p.name}`);
      } else owner.set(port.containerPort, p);
    }
  }
  return out;
}

export type PluginEventType = 'added' | 'updated' | 'removed';

export interface PluginEvent {
  type: PluginEventType;
  namespace: string;
  name: string;
}

/** The controller's log line for an event: `Executor plugin added`, `updated` or `removed`. */
export function pluginEventMessage(e: PluginEvent): string {
  return `Executor plugin ${e.type}`;
}

const key = (e: Pick<PluginEntry, 'namespace' | 'name'>): string => `${e.namespace}/${e.name}`;

/**
 * Added, updated and removed plugins between two snapshots (each keyed by namespace and name).
 * "Updated" means the sidecar or its token setting changed, not merely the resourceVersion.
 * Events are sorted by namespace, then name.
 */
export function diffPlugins(before: Iterable<PluginEntry>, after: Iterable<PluginEntry>): PluginEvent[] {
  const old = new Map<string, PluginEntry>();
  for (const e of before) old.set(key(e), e);
  const events: PluginEvent[] = [];
  const seen = new Set<string>();
  for (const e of after) {
    const k = key(e);
    seen.add(k);
    const prev = old.get(k);
    if (!prev) events.push({ type: 'added', namespace: e.namespace, name: e.name });
    else if (!samePlugin(prev, e)) events.push({ type: 'updated', namespace: e.namespace, name: e.name });
  }
  for (const [k, e] of old) if (!seen.has(k)) events.push({ type: 'removed', namespace: e.namespace, name: e.name });
  return events.sort((a, b) => key(a).localeCompare(key(b)));
}

function samePlugin(a: PluginEntry, b: PluginEntry): boolean {
  return a.automountServiceAccountToken === b.automountServiceAccountToken && isDeepStrictEqual(a.container, b.container);
}
