/**
 * The controller's in-memory view of discovered plugins, fed ConfigMap add/update/delete
 * notifications from a watch. No I/O: each call returns the events to log (and, for a ConfigMap
 * that does not parse, the error to log), so the wiring stays a few lines.
 *
 * It also keeps track of plugins left out of agent pods because they clash with another plugin
 * (same container name or port; see selectAgentPlugins): each change reports the exclusions it
 * started, once, so one bad ConfigMap is logged with its reason instead of breaking the agent
 * pods of every workflow that would see both plugins.
 */
import { tryParsePluginConfigMap, type ConfigMapLike, type PluginEntry } from './parse-configmap.js';
import type { PluginConfigMapError } from './errors.js';
import {
  diffPlugins,
  excludedPlugins,
  exclusionKey,
  pluginsForWorkflow,
  selectAgentPlugins,
  type ExcludedPlugin,
  type PluginEvent,
  type PluginScope,
  type PluginSelection,
} from './registry.js';

export interface CatalogChange {
  events: PluginEvent[];
  /** Set when the ConfigMap is malformed; the plugin is then absent from the catalog. */
  error?: PluginConfigMapError;
  /** Plugins this change left out of agent pods (each exclusion is reported once, when it starts). */
  excluded: ExcludedPlugin[];
}

export interface PluginCatalogOptions {
  /** Namespace where plugflow is installed; its plugins are seen by every workflow namespace. */
  installNamespace?: string;
  /** The agent's own port, which no plugin may use. */
  healthPort?: number;
}

export class PluginCatalog {
  private readonly entries = new Map<string, PluginEntry>();
  private reported = new Set<string>();

  constructor(private readonly options: PluginCatalogOptions = {}) {}

  /** A ConfigMap was added or changed. A malformed one removes the plugin it used to define. */
  upsert(cm: ConfigMapLike): CatalogChange {
    const k = cmKey(cm);
    const before = this.entries.get(k);
    const parsed = tryParsePluginConfigMap(cm);
    if (parsed.ok) this.entries.set(k, parsed.entry);
    else this.entries.delete(k);
    const after = this.entries.get(k);
    const events = diffPlugins(before ? [before] : [], after ? [after] : []);
    return { events, ...(parsed.ok ? {} : { error: parsed.error }), excluded: this.newExclusions() };
  }

  /** A ConfigMap was deleted (or lost its label). */
  remove(cm: ConfigMapLike): CatalogChange {
    const k = cmKey(cm);
    const before = this.entries.get(k);
    this.entries.delete(k);
    return { events: before ? diffPlugins([before], []) : [], excluded: this.newExclusions() };
  }

  /** Replaces everything (after a relist); returns the difference. */
  reset(cms: Iterable<ConfigMapLike>): { events: PluginEvent[]; errors: PluginConfigMapError[]; excluded: ExcludedPlugin[] } {
    const before = [...this.entries.values()];
    this.entries.clear();
    const errors: PluginConfigMapError[] = [];
    for (const cm of cms) {
      const parsed = tryParsePluginConfigMap(cm);
      if (parsed.ok) this.entries.set(cmKey(cm), parsed.entry);
      else errors.push(parsed.error);
    }
    return { events: diffPlugins(before, this.entries.values()), errors, excluded: this.newExclusions() };
  }

  /** The plugins of a workflow (see pluginsForWorkflow), clashing ones included. */
  forWorkflow(scope: PluginScope): PluginEntry[] {
    return pluginsForWorkflow(this.entries.values(), scope);
  }

  /** What the agent pod of a workflow in `workflowNamespace` runs, and what it leaves out. */
  agentPlugins(workflowNamespace: string): PluginSelection {
    const scope = { workflowNamespace, installNamespace: this.options.installNamespace ?? workflowNamespace };
    return selectAgentPlugins(this.forWorkflow(scope), this.selectOptions());
  }

  all(): PluginEntry[] {
    return [...this.entries.values()];
  }

  /** Exclusions in force now that were not reported before; forgets the ones that ended. */
  private newExclusions(): ExcludedPlugin[] {
    const now = excludedPlugins(this.entries.values(), this.options.installNamespace ?? '', this.selectOptions());
    const fresh = now.filter((x) => !this.reported.has(exclusionKey(x)));
    this.reported = new Set(now.map(exclusionKey));
    return fresh;
  }

  private selectOptions(): { healthPort?: number } {
    return this.options.healthPort !== undefined ? { healthPort: this.options.healthPort } : {};
  }
}

function cmKey(cm: ConfigMapLike): string {
  return `${cm.metadata?.namespace ?? ''}/${cm.metadata?.name ?? ''}`;
}
