/**
 * The ConfigMaps a workflow names, as controller features: memoize caches (memo-caches.ts;
 * src/engine/memoize.ts decides) and parameter ConfigMaps (parameter-config-maps.ts;
 * src/engine/parameter-config-maps.ts decides). Their informers select by label; one a workflow
 * names that the informer lacks is looked up before the engine runs, so a missing or unlabelled
 * one is told apart from one not seen yet.
 */
import type { Workflow } from '../../api/index.js';
import type { Observations, TemplateSource } from '../../engine/index.js';
import type { MemoCaches } from '../memo-caches.js';
import { cacheNames, collectTemplateSources, parameterNames, type ObservationInputs } from '../observations.js';
import type { ParameterConfigMaps } from '../parameter-config-maps.js';
import type { WorkflowFeature } from './feature.js';

/** The template informers, as the observation builders take them. */
export type TemplateCaches = Pick<ObservationInputs, 'workflowTemplate' | 'clusterWorkflowTemplate'>;

/** One kind of ConfigMap a workflow names: which names, how they are looked up, what the engine sees. */
interface Part {
  namesOf(wf: Workflow, sources: Record<string, TemplateSource>): string[];
  verify(ns: string, names: string[]): Promise<void>;
  observe(ns: string, names: string[]): Partial<Pick<Observations, 'memoCaches' | 'parameterConfigMaps'>>;
}

/** Memoize caches and parameter ConfigMaps as one feature: the template sources are resolved once a reconcile for both. */
export function configMapsFeature(memo: MemoCaches, maps: ParameterConfigMaps, templates: TemplateCaches): WorkflowFeature {
  const parts: Part[] = [
    {
      namesOf: cacheNames,
      verify: (ns, names) => memo.verify(ns, names),
      observe: (ns, names) => ({ memoCaches: Object.fromEntries(names.map((n) => [n, memo.observe(ns, n)])) }),
    },
    {
      namesOf: parameterNames,
      verify: (ns, names) => maps.verify(ns, names),
      observe: (ns, names) => {
        const found: Record<string, Record<string, string>> = {};
        for (const n of names) {
          const data = maps.data(ns, n);
          if (data) found[n] = data;
        }
        return Object.keys(found).length > 0 ? { parameterConfigMaps: found } : {};
      },
    },
  ];
  return {
    name: 'config-maps',
    prepare: async (wf) => {
      const sources = collectTemplateSources({ workflow: wf, ...templates });
      for (const part of parts) {
        const names = part.namesOf(wf, sources);
        if (names.length > 0) await part.verify(wf.metadata.namespace!, names);
      }
    },
    observe: (wf, observations) => {
      for (const part of parts) {
        const names = part.namesOf(wf, observations.templates ?? {});
        if (names.length > 0) Object.assign(observations, part.observe(wf.metadata.namespace ?? '', names));
      }
    },
  };
}
