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

function namesFeature(
  name: string,
  namesOf: (wf: Workflow, sources: Record<string, TemplateSource>) => string[],
  templates: TemplateCaches,
  verify: (ns: string, names: string[]) => Promise<void>,
  observe: (ns: string, names: string[]) => Partial<Pick<Observations, 'memoCaches' | 'parameterConfigMaps'>>,
): WorkflowFeature {
  return {
    name,
    prepare: async (wf) => {
      const names = namesOf(wf, collectTemplateSources({ workflow: wf, ...templates }));
      if (names.length > 0) await verify(wf.metadata.namespace!, names);
    },
    observe: (wf, observations) => {
      const names = namesOf(wf, observations.templates ?? {});
      if (names.length > 0) Object.assign(observations, observe(wf.metadata.namespace ?? '', names));
    },
  };
}

export function memoCachesFeature(memo: MemoCaches, templates: TemplateCaches): WorkflowFeature {
  return namesFeature(
    'memoize-caches',
    cacheNames,
    templates,
    (ns, names) => memo.verify(ns, names),
    (ns, names) => ({ memoCaches: Object.fromEntries(names.map((n) => [n, memo.observe(ns, n)])) }),
  );
}

export function parameterConfigMapsFeature(maps: ParameterConfigMaps, templates: TemplateCaches): WorkflowFeature {
  return namesFeature(
    'parameter-configmaps',
    parameterNames,
    templates,
    (ns, names) => maps.verify(ns, names),
    (ns, names) => {
      const found: Record<string, Record<string, string>> = {};
      for (const n of names) {
        const data = maps.data(ns, n);
        if (data) found[n] = data;
      }
      return Object.keys(found).length > 0 ? { parameterConfigMaps: found } : {};
    },
  );
}
