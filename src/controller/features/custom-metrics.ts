/**
 * Custom metrics as a controller feature: what a stored status change emits
 * (src/engine/custom-metrics.ts decides) is recorded on the controller's registry
 * (custom-metric-registry.ts); refusals are shown on the workflow as Warning Events.
 */
import type { NodeStatus, Template } from '../../api/index.js';
import { statusMetrics } from '../../engine/index.js';
import type { Logger } from '../../log/logger.js';
import type { ControllerCaches } from '../caches.js';
import type { CustomMetricRegistry } from '../custom-metric-registry.js';
import type { EventRecorder } from '../../kube/event-recorder.js';
import type { WorkflowFeature } from './feature.js';

export function customMetricsFeature(
  registry: CustomMetricRegistry,
  deps: { caches: ControllerCaches; events: EventRecorder; log: Logger },
): WorkflowFeature {
  return {
    name: 'custom-metrics',
    stored: ({ run, before }) => {
      const effective = run.effective;
      const after = run.status;
      const spec = effective.spec;
      if (!spec.metrics && !(spec.templates ?? []).some((t) => t.metrics) && !(usesTemplateRefs(spec) && anyTemplateRef(after.nodes)))
        return;
      const ns = effective.metadata.namespace!;
      const key = `${ns}/${effective.metadata.name}`;
      const templateOf = (node: NodeStatus): Template | undefined => {
        if (node.templateRef) {
          const source = node.templateRef.clusterScope
            ? deps.caches.clusterWorkflowTemplates.get(undefined, node.templateRef.name)
            : deps.caches.workflowTemplates.get(ns, node.templateRef.name);
          return source?.spec?.templates?.find((t) => t.name === node.templateRef!.template);
        }
        return node.templateName ? spec.templates?.find((t) => t.name === node.templateName) : undefined;
      };
      const { emissions, skipped } = statusMetrics(effective, before, after, templateOf, Date.now());
      // Refusals (limits, a name another workflow uses differently) are logged by the registry
      // once per metric and sweep, and shown on the workflow as a Warning Event as often.
      for (const r of registry.record(emissions, key))
        if (r.warn) deps.events.record(effective, 'Warning', 'MetricRefused', `${r.where}: ${r.message}`);
      for (const s of skipped) deps.log.warn(`custom metric not emitted: ${s.where}: ${s.reason}`, { workflow: key });
    },
  };
}

/** Whether the templates call templates of WorkflowTemplates at all (else no node can have run one). */
function usesTemplateRefs(spec: { templates?: unknown[] }): boolean {
  return JSON.stringify(spec.templates ?? []).includes('"templateRef"');
}

/** Whether some node ran a template of a WorkflowTemplate (its metrics count); no array of 100,000 nodes built to ask. */
function anyTemplateRef(nodes: Record<string, NodeStatus> | undefined): boolean {
  for (const id in nodes) if (nodes[id]!.templateRef) return true;
  return false;
}
