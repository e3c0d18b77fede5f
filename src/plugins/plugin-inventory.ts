/**
 * Which executor plugins a workflow namespace gets, and why each other one is not used: the
 * answer people otherwise dig out of the controller's log ("plugin added", "left out of agent
 * pods"). Pure: the server reads the ConfigMaps with the caller's rights and passes them in; the
 * decisions are the controller's own (PluginCatalog, registry.ts), so the two cannot disagree.
 */
import { PluginCatalog } from './plugin-catalog.js';
import type { ConfigMapLike, PluginEntry } from './parse-configmap.js';
import { pluginConfigMapKey, shadowedPlugins } from './registry.js';

export type PluginState = 'used' | 'shadowed' | 'left-out' | 'malformed';

const STATE_ORDER: Record<PluginState, number> = { used: 0, 'left-out': 1, shadowed: 2, malformed: 3 };

export interface InventoryEntry {
  /** Namespace and name of the ConfigMap it comes from. */
  namespace: string;
  configMap: string;
  /** The plugin's name (absent for a ConfigMap that does not parse). */
  plugin?: string;
  state: PluginState;
  /** Why it is not used (shadowed, left out, malformed). */
  reason?: string;
  /** `ns/ConfigMap` of the plugin used in its place. */
  instead?: string;
  container?: { name?: string; image?: string; ports: number[] };
}

export interface PluginInventory {
  workflowNamespace: string;
  installNamespace: string;
  plugins: InventoryEntry[];
}

export function pluginInventory(
  configMaps: Iterable<ConfigMapLike>,
  scope: { workflowNamespace: string; installNamespace: string; healthPort?: number },
): PluginInventory {
  const catalog = new PluginCatalog({ installNamespace: scope.installNamespace, healthPort: scope.healthPort });
  const { errors } = catalog.reset(configMaps);
  const visible = catalog.forWorkflow(scope);
  const selection = catalog.agentPlugins(scope.workflowNamespace);
  const used = new Set(selection.plugins);
  const excluded = new Map(selection.excluded.map((x) => [x.plugin, x]));
  const winner = new Map(visible.map((p) => [p.name, p]));
  const shadowed = new Map(shadowedPlugins(catalog.all()).map((x) => [x.plugin, x]));
  const plugins: InventoryEntry[] = catalog
    .all()
    .filter((p) => p.namespace === scope.workflowNamespace || p.namespace === scope.installNamespace)
    .map((p) => {
      const base = { namespace: p.namespace, configMap: p.configMapName, plugin: p.name, container: containerOf(p) };
      if (used.has(p)) return { ...base, state: 'used' as const };
      const x = excluded.get(p);
      if (x) return { ...base, state: 'left-out' as const, reason: x.reason, instead: x.keptInstead && pluginConfigMapKey(x.keptInstead) };
      const same = shadowed.get(p);
      if (same) return { ...base, state: 'shadowed' as const, reason: same.reason, instead: pluginConfigMapKey(same.keptInstead!) };
      const w = winner.get(p.name)!;
      const why = `ConfigMap ${pluginConfigMapKey(w)} defines plugin ${p.name} too, and a workflow's own namespace wins over the installation namespace`;
      return { ...base, state: 'shadowed' as const, reason: why, instead: pluginConfigMapKey(w) };
    });
  for (const e of errors) {
    if (e.namespace !== scope.workflowNamespace && e.namespace !== scope.installNamespace) continue;
    plugins.push({ namespace: e.namespace, configMap: e.configMapName, state: 'malformed', reason: e.problems.join('; ') });
  }
  // By plugin, the one in use first, then what was left out or shadowed.
  plugins.sort(
    (a, b) =>
      cmp(a.plugin ?? a.configMap, b.plugin ?? b.configMap) ||
      STATE_ORDER[a.state] - STATE_ORDER[b.state] ||
      cmp(a.namespace, b.namespace) ||
      cmp(a.configMap, b.configMap),
  );
  return { workflowNamespace: scope.workflowNamespace, installNamespace: scope.installNamespace, plugins };
}

function containerOf(p: PluginEntry): InventoryEntry['container'] {
  return { name: p.container.name, image: p.container.image, ports: (p.container.ports ?? []).map((x) => x.containerPort) };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
