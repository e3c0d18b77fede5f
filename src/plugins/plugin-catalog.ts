/**
 * The controller's in-memory view of discovered plugins, fed ConfigMap add/update/delete
 * notifications from a watch. No I/O: each call returns the events to log (and, for a ConfigMap
 * that does not parse, the error to log), so the wiring stays a few lines.
 */
import { tryParsePluginConfigMap, type ConfigMapLike, type PluginEntry } from './parse-configmap.js';
import type { PluginConfigMapError } from './errors.js';
import { diffPlugins, pluginsForWorkflow, type PluginEvent, type PluginScope } from './registry.js';

export interface CatalogChange {
  events: PluginEvent[];
  /** Set when the ConfigMap is malformed; the plugin is then absent from the catalog. */
  error?: PluginConfigMapError;
}

export class PluginCatalog {
  private readonly entries = new Map<string, PluginEntry>();

  /** A ConfigMap was added or changed. A malformed one removes the plugin it used to define. */
  upsert(cm: ConfigMapLike): CatalogChange {
    const k = cmKey(cm);
    const before = this.entries.get(k);
    const parsed = tryParsePluginConfigMap(cm);
    if (parsed.ok) this.entries.set(k, parsed.entry);
    else this.entries.delete(k);
    const after = this.entries.get(k);
    return { events: diffPlugins(before ? [before] : [], after ? [after] : []), error: parsed.ok ? undefined : parsed.error };
  }

  /** A ConfigMap was deleted (or lost its label). */
  remove(cm: ConfigMapLike): CatalogChange {
    const k = cmKey(cm);
    const before = this.entries.get(k);
    this.entries.delete(k);
    return { events: before ? diffPlugins([before], []) : [] };
  }

  /** Replaces everything (after a relist); returns the difference. */
  reset(cms: Iterable<ConfigMapLike>): { events: PluginEvent[]; errors: PluginConfigMapError[] } {
    const before = [...this.entries.values()];
    this.entries.clear();
    const errors: PluginConfigMapError[] = [];
    for (const cm of cms) {
      const parsed = tryParsePluginConfigMap(cm);
      if (parsed.ok) this.entries.set(cmKey(cm), parsed.entry);
      else errors.push(parsed.error);
    }
    return { events: diffPlugins(before, this.entries.values()), errors };
  }

  /** The plugins of a workflow (see pluginsForWorkflow). */
  forWorkflow(scope: PluginScope): PluginEntry[] {
    return pluginsForWorkflow(this.entries.values(), scope);
  }

  all(): PluginEntry[] {
    return [...this.entries.values()];
  }
}

function cmKey(cm: ConfigMapLike): string {
  return `${cm.metadata?.namespace ?? ''}/${cm.metadata?.name ?? ''}`;
}
