/**
 * The ConfigMaps `valueFrom.configMapKeyRef` parameters read (src/engine/parameter-config-maps.ts
 * decides, this supplies them): those labelled `workflows.plugflow.io/configmap-type: Parameter`,
 * watched through one label-selected informer so a reconcile reads them from memory.
 *
 * A ConfigMap created just before the workflow that names it may not have reached the informer
 * yet; `verify` looks such names up with a GET (at most every 10 s each) before the engine runs,
 * so the workflow does not fail with "not found" for a ConfigMap that exists. Unlabelled
 * ConfigMaps are never read: the label is their owner's consent to be read by workflows.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { LABEL_CONFIGMAP_TYPE } from '../api/index.js';
import { CONFIGMAP_TYPE_PARAMETER } from '../engine/index.js';
import { isNotFound } from '../kube/errors.js';
import type { Informer } from '../kube/informer.js';
import { typedConfigMapInformer, type TypedConfigMapOptions } from './typed-config-maps.js';
import { CONFIGMAPS } from '../kube/resource.js';

const LOOKUP_TTL_MS = 10_000;

export interface ParameterConfigMapsOptions extends TypedConfigMapOptions {
  now?: () => number;
}

export class ParameterConfigMaps {
  readonly informer: Informer<V1ConfigMap>;
  /** ConfigMaps found by `verify` that the informer did not hold yet (or undefined: not there), and when. */
  private readonly looked = new Map<string, { data: Record<string, string> | undefined; at: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: ParameterConfigMapsOptions) {
    this.now = opts.now ?? Date.now;
    this.informer = typedConfigMapInformer(opts, CONFIGMAP_TYPE_PARAMETER);
  }

  /** The data of labelled ConfigMap `ns/name`, or undefined when there is none. */
  data(ns: string, name: string): Record<string, string> | undefined {
    const cm = this.informer.get(ns, name);
    if (cm) return cm.data ?? {};
    return this.looked.get(`${ns}/${name}`)?.data;
  }

  /** GETs the named ConfigMaps the informer does not hold (see above). */
  async verify(ns: string, names: readonly string[]): Promise<void> {
    for (const name of names) {
      const key = `${ns}/${name}`;
      if (this.informer.get(ns, name)) {
        this.looked.delete(key);
        continue;
      }
      const seen = this.looked.get(key);
      if (seen && this.now() - seen.at < LOOKUP_TTL_MS) continue;
      let cm: V1ConfigMap | undefined;
      try {
        cm = await this.opts.client.get<V1ConfigMap>(CONFIGMAPS, ns, name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const labelled = cm?.metadata?.labels?.[LABEL_CONFIGMAP_TYPE] === CONFIGMAP_TYPE_PARAMETER;
      this.looked.set(key, { data: labelled ? (cm!.data ?? {}) : undefined, at: this.now() });
      if (this.looked.size > 10_000) this.looked.delete(this.looked.keys().next().value as string);
    }
  }
}
