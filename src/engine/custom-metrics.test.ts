import { describe, expect, it } from 'vitest';
import type { NodeStatus, Template, Workflow, WorkflowStatus } from '../api/index.js';
import { metricProblems, resourcesDuration, statusMetrics, type MetricSpec } from './custom-metrics.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const metricsOf = (...vendorP: MetricSpec[]) => ({ vendorP });

const template: Template = {
  name: 'build',
  inputs: { parameters: [{ name: 'target' }] },
  container: { image: 'alpine', command: ['true'] },
  metrics: metricsOf(
    {
      name: 'build_runs',
      help: 'Builds by result',
      labels: [
        { key: 'status', value: '{{status}}' },
        { key: 'target', value: '{{inputs.parameters.target}}' },
      ],
      counter: { value: '1' },
    },
    { name: 'build_seconds', help: 'Build time', histogram: { value: '{{duration}}', buckets: [1, 10, 60] } },
    { name: 'build_failures', help: 'Failed builds', when: "{{status}} == 'Failed'", counter: { value: '1' } },
    { name: 'build_running_seconds', help: 'Running time', gauge: { value: '{{duration}}', realtime: true } },
  ) as never,
};

function node(phase: NodeStatus['phase'], finishedAt?: string): NodeStatus {
  return {
    id: 'wf-1',
    name: 'wf.build',
    displayName: 'build',
    type: 'Pod',
    phase,
    templateName: 'build',
    startedAt: '2026-01-01T00:00:00Z',
    ...(finishedAt ? { finishedAt } : {}),
    inputs: { parameters: [{ name: 'target', value: 'linux' }] },
  };
}
const wf: Workflow = {
  apiVersion: 'plugflow.io/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'wf', namespace: 'ns' },
  spec: { entrypoint: 'build', templates: [template] },
};
const status = (n: NodeStatus, phase: WorkflowStatus['phase'] = 'Running'): WorkflowStatus => ({
  phase,
  startedAt: '2026-01-01T00:00:00Z',
  nodes: { [n.id]: n },
});

describe('custom metrics', () => {
  it('estimates resourcesDuration as the peer does: requests, else limits, else 100m CPU and 100Mi', () => {
    const t: Template = {
      name: 't',
      container: { image: 'a', command: ['x'], resources: { requests: { cpu: '2', memory: '50Mi' } } },
      sidecars: [{ name: 's', image: 'b', resources: { limits: { memory: '1Gi' } } }],
    } as Template;
    expect(resourcesDuration(t, 60)).toEqual({ cpu: 126, memory: 644.4 });
    expect(resourcesDuration({ name: 'u', container: { image: 'a', command: ['x'] } }, 10)).toEqual({ cpu: 1, memory: 10 });
  });

  it("emits a template's metrics once, when its node ends, with rendered labels and values", () => {
    const running = status(node('Running'));
    const first = statusMetrics(wf, undefined, running, () => template, T0 + 5_000);
    expect(first.emissions.map((e) => [e.name, e.realtime])).toEqual([['build_running_seconds', { startMs: T0 }]]);

    const done = status(node('Succeeded', '2026-01-01T00:00:12Z'));
    const ended = statusMetrics(wf, running, done, () => template, T0 + 13_000);
    expect(ended.emissions.map((e) => [e.name, e.kind, e.labels, e.value ?? e.realtime])).toEqual([
      ['build_runs', 'counter', { status: 'Succeeded', target: 'linux' }, 1],
      ['build_seconds', 'histogram', {}, 12],
      ['build_running_seconds', 'gauge', {}, { startMs: T0, endMs: T0 + 12_000 }],
    ]);
    // The same ended status seen again emits nothing (a retried reconcile does not count twice).
    expect(statusMetrics(wf, done, done, () => template, T0 + 14_000).emissions).toEqual([]);
  });

  it('skips a metric whose value is not a number, saying why', () => {
    const t: Template = { ...template, metrics: metricsOf({ name: 'bad', help: 'h', gauge: { value: '{{outputs.result}}' } }) as never };
    const n = { ...node('Succeeded', '2026-01-01T00:00:01Z'), outputs: { result: 'many' } };
    expect(statusMetrics(wf, undefined, status(n), () => t, T0).skipped).toEqual([
      { where: 'template "build".metrics.vendorP[bad]', reason: 'the value "many" is not a number' },
    ]);
  });

  it('emits workflow-level metrics when the workflow ends, with workflow variables', () => {
    const w: Workflow = {
      ...wf,
      metadata: { ...wf.metadata, labels: { team: 'a' } },
      spec: {
        ...wf.spec,
        metrics: metricsOf({
          name: 'wf_done',
          help: 'h',
          labels: [
            { key: 'team', value: '{{workflow.labels.team}}' },
            { key: 'status', value: '{{workflow.status}}' },
          ],
          counter: { value: '1' },
        }) as never,
      },
    };
    const end: WorkflowStatus = { phase: 'Failed', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:01:00Z', nodes: {} };
    expect(statusMetrics(w, { phase: 'Running' }, end, () => undefined, T0).emissions).toMatchObject([
      { name: 'wf_done', labels: { team: 'a', status: 'Failed' }, value: 1 },
    ]);
  });

  it('validation bounds what one declaration registers, and keeps the namespace label for the controller', () => {
    expect(
      metricProblems(
        metricsOf(
          { name: 'ns', help: 'h', counter: { value: '1' }, labels: [{ key: 'workflow_namespace', value: 'other-team' }] },
          { name: `n${'x'.repeat(200)}`, help: 'h', counter: { value: '1' } },
          { name: 'helpful', help: 'h'.repeat(1025), counter: { value: '1' } },
          {
            name: 'wide',
            help: 'h',
            counter: { value: '1' },
            labels: Array.from({ length: 17 }, (_, i) => ({ key: `k${i}`, value: 'v' })),
          },
          { name: 'fine', help: 'h', histogram: { value: '1', buckets: Array.from({ length: 65 }, (_, i) => i) } },
        ),
        'spec.metrics',
      ),
    ).toEqual([
      "spec.metrics.vendorP[ns].labels: workflow_namespace is set by the controller (the workflow's namespace); use another label name",
      `spec.metrics.vendorP[n${'x'.repeat(200)}].name: a metric name is at most 200 characters`,
      'spec.metrics.vendorP[helpful].help: a help text is at most 1024 characters',
      'spec.metrics.vendorP[wide].labels: at most 16 labels',
      'spec.metrics.vendorP[fine].histogram.buckets: at most 64 buckets',
    ]);
    expect(
      metricProblems(
        metricsOf({ name: 'h', help: 'h', histogram: { value: '1', buckets: [1] }, labels: [{ key: 'le', value: 'x' }] }),
        'spec.metrics',
      ),
    ).toEqual(['spec.metrics.vendorP[h].labels: le is the bucket bound of every histogram series; use another label name']);
  });

  it('validation names each problem: names, help, kinds, buckets, realtime values, labels', () => {
    expect(
      metricProblems(
        metricsOf(
          { name: '1bad', help: 'h', counter: { value: '1' } },
          { name: 'nohelp', counter: { value: '1' } },
          { name: 'two', help: 'h', counter: { value: '1' }, gauge: { value: '1' } },
          { name: 'hist', help: 'h', histogram: { value: '1', buckets: [5, 1] } },
          { name: 'rt', help: 'h', gauge: { value: '{{outputs.result}}', realtime: true } },
          {
            name: 'labels',
            help: 'h',
            counter: { value: '1' },
            labels: [
              { key: 'a-b', value: 'x' },
              { key: 'k', value: '1' },
              { key: 'k', value: '2' },
            ],
          },
        ),
        'spec.templates[t].metrics',
      ),
    ).toEqual([
      'spec.templates[t].metrics.vendorP[1bad].name: "1bad" is not a metric name (letters, digits and \'_\', not starting with a digit)',
      'spec.templates[t].metrics.vendorP[nohelp].help: a metric needs a help text',
      'spec.templates[t].metrics.vendorP[two]: exactly one of counter, gauge and histogram is required (found counter, gauge)',
      'spec.templates[t].metrics.vendorP[hist].histogram.buckets: buckets must be numbers in increasing order',
      'spec.templates[t].metrics.vendorP[rt].gauge.value: a realtime gauge follows the running time: its value must be {{duration}} (or {{workflow.duration}})',
      'spec.templates[t].metrics.vendorP[labels].labels: "a-b" is not a label name',
      'spec.templates[t].metrics.vendorP[labels].labels: label k is given twice',
    ]);
  });
});
