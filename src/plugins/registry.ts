/**
 * Which plugins a workflow gets, and what changed between two discovery snapshots. Pure.
 *
 * Precedence (spec document 000, discovery rule 2): plugins come from the workflow's namespace
 * and the installation namespace; on a name clash only the workflow namespace's plugin is
 * loaded. The result is sorted by name so the call order and the agent pod are deterministic
 * (the peer loads both plugins of a clash in random order).
 */
import { isDeepStrictEqual } from 'node:util';
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
    if (e.namespace === scope.workflowNamespace) {
      byName.set(e.name, e);
    } else if (e.namespace === scope.installNamespace && byName.get(e.name)?.namespace !== scope.workflowNamespace) {
      byName.set(e.name, e);
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Warnings for plugins of one workflow that listen on the same port: they share the agent pod's
 * network namespace, so only one of them could bind it. The agent pod builder refuses them.
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
