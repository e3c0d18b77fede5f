/**
 * Custom metrics against the real API server, with the local pod runner as the kubelet: the
 * metrics a workflow and its templates declare appear on the controller's /metrics endpoint with
 * their rendered labels and values, once per ended node (a counter counts each node once even
 * though the controller reconciles many times), a realtime gauge reads the running time, and a
 * metric with an invalid name fails the workflow at once, naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let bed: RunnerBed;
let controller: RunningController;
const scrape = async () => (await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`)).text();

beforeAll(async () => {
  bed = await startRunnerBed('metrics');
  ({ ns, client } = bed);
  controller = await startController({
    kubeConfig: adminKubeConfig(),
    namespace: ns,
    metricsPort: 0,
    metricsHost: '127.0.0.1',
    log: captureLogger().log,
  });
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await bed?.stop();
});

describe('custom metrics', () => {
  it('serves the template and workflow metrics with rendered labels, each ended node counted once', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('measured', {
        entrypoint: 'main',
        metrics: {
          vendorP: [
            {
              name: 'pf_test_workflow_seconds',
              help: 'Workflow time',
              labels: [{ key: 'status', value: '{{workflow.status}}' }],
              gauge: { value: '{{workflow.duration}}' },
            },
            { name: 'pf_test_workflow_running_seconds', help: 'Running time', gauge: { value: '{{workflow.duration}}', realtime: true } },
          ],
        },
        templates: [
          {
            name: 'main',
            steps: [
              [
                { name: 'ok', template: 'job', arguments: { parameters: [{ name: 'code', value: '0' }] } },
                { name: 'bad', template: 'job', arguments: { parameters: [{ name: 'code', value: '3' }] }, continueOn: { failed: true } },
                { name: 'ok2', template: 'job', arguments: { parameters: [{ name: 'code', value: '0' }] } },
              ],
            ],
          },
          {
            name: 'job',
            inputs: { parameters: [{ name: 'code' }] },
            metrics: {
              vendorP: [
                {
                  name: 'pf_test_jobs_total',
                  help: 'Jobs by result',
                  labels: [
                    { key: 'status', value: '{{status}}' },
                    { key: 'code', value: '{{inputs.parameters.code}}' },
                  ],
                  counter: { value: '1' },
                },
                { name: 'pf_test_job_failures_total', help: 'Failed jobs', when: "{{status}} == 'Failed'", counter: { value: '1' } },
              ],
            },
            container: { image: 'alpine:3', command: ['sh', '-c', 'sleep 1; exit {{inputs.parameters.code}}'] },
          },
        ],
      } as Workflow['spec']),
    );
    // While it runs, the realtime gauge follows the running time.
    await eventually(
      async () => (/pf_test_workflow_running_seconds [1-9]/.test(await scrape()) ? true : undefined),
      'a running realtime gauge',
      30_000,
    );
    const done = await waitForCompletion(client, ns, 'measured', 60_000);
    expect(done.status?.phase).toBe('Succeeded');
    const text = await eventually(
      async () => {
        const t = await scrape();
        return t.includes('pf_test_workflow_seconds{') ? t : undefined;
      },
      'the workflow metric',
      10_000,
    );
    expect(text).toContain('# HELP pf_test_jobs_total Jobs by result');
    expect(text).toContain('pf_test_jobs_total{status="Succeeded",code="0"} 2');
    expect(text).toContain('pf_test_jobs_total{status="Failed",code="3"} 1');
    expect(text).toContain('pf_test_job_failures_total 1');
    expect(text).toMatch(/pf_test_workflow_seconds\{status="Succeeded"\} \d/);
  }, 120_000);

  it('a metric with an invalid name fails the workflow at once, naming the field', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('badly-measured', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            metrics: { vendorP: [{ name: 'runs-total', help: 'h', counter: { value: '1' } }] },
            container: { image: 'alpine:3', command: ['true'] },
          },
        ],
      } as Workflow['spec']),
    );
    const wf = await waitForCompletion(client, ns, 'badly-measured', 30_000);
    expect(wf.status?.phase).toBe('Failed');
    expect(wf.status?.message).toContain('spec.templates[main].metrics.vendorP[runs-total].name "runs-total" is not a metric name');
  }, 60_000);
});
