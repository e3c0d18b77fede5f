/**
 * Executor plugins left out of a namespace's agent pods (a container name or port clashes with
 * another plugin's; plugin-discovery.ts finds them), as a controller feature: the engine hears of
 * them, so a plugin step naming one fails with the reason instead of waiting for ever.
 */
import type { WorkflowFeature } from './feature.js';

export function excludedPluginsFeature(excludedFor: (namespace: string) => Record<string, string>): WorkflowFeature {
  return {
    name: 'excluded-plugins',
    observe: (wf, observations) => {
      const excluded = excludedFor(wf.metadata.namespace!);
      if (Object.keys(excluded).length > 0) observations.excludedPlugins = excluded;
    },
  };
}
