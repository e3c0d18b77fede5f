/**
 * The controller's features (feature.ts), in the order a reconcile calls them: the one place a
 * feature is registered.
 */
import type { ArtifactGC } from '../artifact-gc.js';
import type { ControllerCaches } from '../caches.js';
import type { CustomMetricRegistry } from '../custom-metric-registry.js';
import type { PodInputs } from '../pod-inputs.js';
import type { ResourceRunner } from '../resource-runner.js';
import type { Synchronizer } from '../synchronizer.js';
import type { EventRecorder } from '../../kube/event-recorder.js';
import type { Logger } from '../../log/logger.js';
import { archiveFeature } from './archive.js';
import type { Archiver } from '../archiver.js';
import { artifactGCFeature } from './artifact-gc.js';
import { configMapsFeature, type TemplateCaches } from './config-maps.js';
import { customMetricsFeature } from './custom-metrics.js';
import { excludedPluginsFeature } from './excluded-plugins.js';
import type { WorkflowFeature } from './feature.js';
import { locksFeature } from './locks.js';
import { nodeEventsFeature } from './node-events.js';
import { podInputsFeature } from './pod-inputs.js';
import { resourceRunsFeature } from './resource-runs.js';

export type { FeatureOutcome, ReconcileRun, StoredRun, WorkflowFeature } from './feature.js';
export { mergeOutcomes } from './feature.js';

export interface FeatureDeps {
  caches: ControllerCaches;
  locks: Synchronizer;
  resources: ResourceRunner;
  customMetrics: CustomMetricRegistry;
  artifactGC: ArtifactGC;
  /** The lookups step pods need before they are built. */
  podInputs: PodInputs;
  events: EventRecorder;
  log: Logger;
  /** Record the peer's node Events (WorkflowNodeRunning, …; `--node-events`). */
  nodeEvents?: boolean;
  /** Plugins left out of a namespace's agent pods; only with executor plugins on. */
  excludedPlugins?: (namespace: string) => Record<string, string>;
  /** Finished workflows go to the archive (only with a database configured). */
  archiver?: Archiver;
}

export function workflowFeatures(d: FeatureDeps): WorkflowFeature[] {
  const templates: TemplateCaches = {
    workflowTemplate: (ns, name) => d.caches.workflowTemplates.get(ns, name),
    clusterWorkflowTemplate: (name) => d.caches.clusterWorkflowTemplates.get(undefined, name),
  };
  return [
    locksFeature(d.locks),
    podInputsFeature(d.podInputs),
    configMapsFeature(d.caches.memo, d.caches.parameterConfigMaps, templates),
    resourceRunsFeature(d.resources),
    ...(d.excludedPlugins ? [excludedPluginsFeature(d.excludedPlugins)] : []),
    customMetricsFeature(d.customMetrics, d),
    ...(d.nodeEvents ? [nodeEventsFeature(d.events)] : []),
    artifactGCFeature(d.artifactGC),
    // Last: a workflow is archived once every other feature is done with it.
    ...(d.archiver ? [archiveFeature(d.archiver)] : []),
  ];
}
