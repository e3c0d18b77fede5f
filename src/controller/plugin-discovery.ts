/**
 * Executor plugin discovery (only with the feature gate on): one cluster-wide ConfigMap
 * informer restricted by the label `workflows.plugflow.io/configmap-type=ExecutorPlugin`, which
 * keeps the parsed plugins and logs `Executor plugin added|updated|removed` with namespace and
 * name. A malformed ConfigMap is logged with every reason and ignored (a previously valid
 * version of it is dropped, logged as removed). Which plugins a workflow gets is decided by
 * src/plugins' registry (workflow namespace wins over the installation namespace).
 */
import { CONFIGMAP_TYPE_EXECUTOR_PLUGIN, LABEL_CONFIGMAP_TYPE } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { Informer, dropManagedFields } from '../kube/informer.js';
import { objectKey, type KubeObject } from '../kube/object-store.js';
import { CONFIGMAPS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { diffPlugins, pluginEventMessage, pluginsForWorkflow, tryParsePluginConfigMap, type PluginEntry } from '../plugins/index.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export class PluginDiscovery {
  readonly informer: Informer<ConfigMap>;
  private readonly entries = new Map<string, PluginEntry>();

  constructor(
    client: KubeClient,
    private readonly installNamespace: string,
    private readonly log: Logger,
    informerOptions: { resyncMs?: number; watchdogMs?: number } = {},
  ) {
    this.informer = new Informer<ConfigMap>({
      client,
      type: CONFIGMAPS,
      labelSelector: `${LABEL_CONFIGMAP_TYPE}=${CONFIGMAP_TYPE_EXECUTOR_PLUGIN}`,
      transform: dropManagedFields,
      log,
      // Resync would only re-parse unchanged ConfigMaps; changes arrive by watch.
      resyncMs: 0,
      watchdogMs: informerOptions.watchdogMs,
    });
    this.informer.addHandlers({
      onAdd: (cm) => this.upsert(cm),
      onUpdate: (_old, cm) => this.upsert(cm),
      onDelete: (cm) => this.remove(objectKey(cm)),
    });
  }

  /** The plugins of a workflow in `namespace`, sorted by name. */
  pluginsFor(namespace: string): PluginEntry[] {
    return pluginsForWorkflow(this.entries.values(), { workflowNamespace: namespace, installNamespace: this.installNamespace });
  }

  /** Every valid plugin known, in any namespace. */
  all(): PluginEntry[] {
    return [...this.entries.values()];
  }

  private upsert(cm: ConfigMap): void {
    const key = objectKey(cm);
    const parsed = tryParsePluginConfigMap(cm as Parameters<typeof tryParsePluginConfigMap>[0]);
    const before = this.entries.get(key);
    if (!parsed.ok) {
      this.log.warn('Executor plugin ConfigMap is malformed and ignored', {
        namespace: cm.metadata?.namespace,
        name: cm.metadata?.name,
        reason: parsed.error.problems.join('; '),
      });
      if (before) this.remove(key);
      return;
    }
    this.entries.set(key, parsed.entry);
    this.report(before ? [before] : [], [parsed.entry]);
  }

  private remove(key: string): void {
    const before = this.entries.get(key);
    if (!before) return;
    this.entries.delete(key);
    this.report([before], []);
  }

  private report(before: PluginEntry[], after: PluginEntry[]): void {
    for (const e of diffPlugins(before, after)) {
      this.log.info(pluginEventMessage(e), { namespace: e.namespace, name: e.name, plugin: e.name });
    }
  }
}
