/**
 * The ConfigMaps the controller reads are chosen by their `workflows.plugflow.io/configmap-type`
 * label (memoize caches, parameter ConfigMaps): one label-selected informer per type, holding
 * only name, namespace, labels and data — a cluster's other ConfigMaps are never listed.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { LABEL_CONFIGMAP_TYPE } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { CONFIGMAPS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';

export interface TypedConfigMapOptions {
  client: KubeClient;
  namespace?: string;
  log: Logger;
  watchdogMs?: number;
}

/** An informer over the ConfigMaps labelled `configmap-type: <type>` (resync off: changes arrive by watch). */
export function typedConfigMapInformer(opts: TypedConfigMapOptions, type: string): Informer<V1ConfigMap> {
  return new Informer<V1ConfigMap>({
    client: opts.client,
    type: CONFIGMAPS,
    namespace: opts.namespace,
    labelSelector: `${LABEL_CONFIGMAP_TYPE}=${type}`,
    resyncMs: 0,
    log: opts.log,
    watchdogMs: opts.watchdogMs,
    transform: (cm) => ({
      metadata: { name: cm.metadata?.name, namespace: cm.metadata?.namespace, labels: cm.metadata?.labels },
      data: cm.data,
    }),
  });
}
