/**
 * Executor plugin discovery (only with the feature gate on): one cluster-wide ConfigMap
 * informer restricted by the label `workflows.plugflow.io/configmap-type=ExecutorPlugin`, which
 * keeps the parsed plugins (src/plugins' PluginCatalog) and logs `Executor plugin
 * added|updated|removed` with namespace and name. A malformed ConfigMap is logged with every
 * reason and ignored (a previously valid version of it is dropped, logged as removed). Which
 * plugins a workflow gets is decided by src/plugins' registry (workflow namespace wins over the
 * installation namespace); a plugin whose container name or port clashes with another's is left
 * out of agent pods, logged once with the reason (`Executor plugin left out of agent pods`),
 * and a step that names it fails with that reason.
 */
import { CONFIGMAP_TYPE_EXECUTOR_PLUGIN, LABEL_CONFIGMAP_TYPE } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { Informer, dropManagedFields } from '../kube/informer.js';
import type { KubeObject } from '../kube/object-store.js';
import { CONFIGMAPS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import {
  DEFAULT_AGENT_HEALTH_PORT,
  PluginCatalog,
  pluginConfigMapKey,
  pluginEventMessage,
  type CatalogChange,
  type ConfigMapLike,
  type PluginEntry,
} from '../plugins/index.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export class PluginDiscovery {
  readonly informer: Informer<ConfigMap>;
  private readonly catalog: PluginCatalog;

  constructor(
    client: KubeClient,
    installNamespace: string,
    private readonly log: Logger,
    informerOptions: { resyncMs?: number; watchdogMs?: number } = {},
    agentHealthPort = DEFAULT_AGENT_HEALTH_PORT,
  ) {
    this.catalog = new PluginCatalog({ installNamespace, healthPort: agentHealthPort });
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
      onAdd: (cm) => this.report(cm, this.catalog.upsert(cm as ConfigMapLike)),
      onUpdate: (_old, cm) => this.report(cm, this.catalog.upsert(cm as ConfigMapLike)),
      onDelete: (cm) => this.report(cm, this.catalog.remove(cm as ConfigMapLike)),
    });
  }

  /** The plugins of the agent pod of a workflow in `namespace`, sorted by name (clashing ones left out). */
  pluginsFor(namespace: string): PluginEntry[] {
    return this.catalog.agentPlugins(namespace).plugins;
  }

  /** Plugins a workflow in `namespace` would see but its agent pod leaves out: name → reason. */
  excludedFor(namespace: string): Record<string, string> {
    return Object.fromEntries(this.catalog.agentPlugins(namespace).excluded.map((x) => [x.plugin.name, x.reason]));
  }

  /** Every valid plugin known, in any namespace. */
  all(): PluginEntry[] {
    return this.catalog.all();
  }

  private report(cm: ConfigMap, change: CatalogChange): void {
    if (change.error) {
      this.log.warn('Executor plugin ConfigMap is malformed and ignored', {
        namespace: cm.metadata?.namespace,
        name: cm.metadata?.name,
        reason: change.error.problems.join('; '),
      });
    }
    for (const e of change.events) {
      this.log.info(pluginEventMessage(e), { namespace: e.namespace, name: e.name, plugin: e.name });
    }
    for (const x of change.excluded) {
      this.log.warn('Executor plugin left out of agent pods', {
        namespace: x.plugin.namespace,
        name: x.plugin.name,
        plugin: x.plugin.name,
        configMap: pluginConfigMapKey(x.plugin),
        field: x.field,
        ...(x.keptInstead ? { keptInstead: pluginConfigMapKey(x.keptInstead) } : {}),
        reason: x.reason,
      });
    }
  }
}
