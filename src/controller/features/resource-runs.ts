/**
 * Resource templates as a controller feature: the runs of the resource runner
 * (resource-runner.ts) are observed for the engine (src/engine/execute-resource.ts), and a
 * deleted workflow's runs are stopped.
 */
import type { ResourceRunner } from '../resource-runner.js';
import type { WorkflowFeature } from './feature.js';

export function resourceRunsFeature(runner: ResourceRunner): WorkflowFeature {
  return {
    name: 'resource-runs',
    observe: (wf, observations) => {
      const resources = runner.observe(wf);
      if (resources.length > 0) observations.resources = resources;
    },
    deleting: async (wf) => {
      runner.forget(`${wf.metadata.namespace}/${wf.metadata.name}`);
      return undefined;
    },
    forget: (key) => runner.forget(key),
  };
}
