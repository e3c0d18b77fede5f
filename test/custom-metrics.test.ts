/**
 * Custom metrics against the real API server, with the local pod runner as the kubelet: the
 * metrics a workflow and its templates declare appear on the controller's /metrics endpoint with
 * their rendered labels and values, once per ended node (a counter counts each node once even
 * though the controller reconciles many times), a realtime gauge reads the running time, and a
 * metric with an invalid name fails the workflow at once, naming the field.
 *
 * And what one tenant can make the shared endpoint hold is bounded (hardening II): /metrics is
 * read only with a token allowed to get it; 150 pod-less steps with a 1 MiB label each leave a
 * small scrape, a Warning Event on the workflow and a drop counter, and the controller lives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import type { KubeClient } from '../src/kube/client.js';
import { EVENTS, WORKFLOWS } from '../src/kube/resource.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { adminKubeConfig, cluster } from './support/cluster.js';

let ns: string;
let client: KubeClient;
let bed: RunnerBed;
let controller: RunningController;
const scrape = async () =>
  (
    await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`, { headers: { authorization: `Bearer ${cluster().adminToken}` } })
  ).text();

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
      async () => (/pf_test_workflow_running_seconds\{[^}]*\} [1-9]/.test(await scrape()) ? true : undefined),
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
    // Every series carries the workflow's namespace, a label workflows cannot set.
    expect(text).toContain(`pf_test_jobs_total{status="Succeeded",code="0",workflow_namespace="${ns}"} 2`);
    expect(text).toContain(`pf_test_jobs_total{status="Failed",code="3",workflow_namespace="${ns}"} 1`);
    expect(text).toContain(`pf_test_job_failures_total{workflow_namespace="${ns}"} 1`);
    expect(text).toMatch(new RegExp(`pf_test_workflow_seconds\\{status="Succeeded",workflow_namespace="${ns}"\\} \\d`));
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

  it('/metrics answers only a token whose account may get it: 401 without one, 403 for a tenant, 200 for the admin', async () => {
    const at = `http://127.0.0.1:${controller.metricsPort}`;
    const none = await fetch(`${at}/metrics`);
    expect(none.status).toBe(401);
    expect(await none.text()).toMatch(/needs "Authorization: Bearer <token>"/);
    const tenant = await fetch(`${at}/metrics`, { headers: { authorization: `Bearer ${cluster().userTokens.alice}` } });
    expect(tenant.status).toBe(403);
    expect(await tenant.text()).toMatch(/may not get the non-resource URL \/metrics/);
    const made = await fetch(`${at}/metrics`, { headers: { authorization: 'Bearer made-up-token' } });
    expect(made.status).toBe(401);
    expect((await fetch(`${at}/healthz`)).status).toBe(200);
  });

  it('150 pod-less steps with a 1 MiB label each: a small scrape, a Warning Event, a drop counter, a live controller', async () => {
    await client.create(
      WORKFLOWS,
      ns,
      workflow('label-bomb', {
        entrypoint: 'main',
        templates: [
          {
            name: 'main',
            steps: [
              [
                {
                  name: 'leaf',
                  template: 'leaf',
                  withSequence: { count: '150' },
                  arguments: { parameters: [{ name: 'i', value: '{{item}}' }] },
                },
              ],
            ],
          },
          {
            name: 'leaf',
            inputs: { parameters: [{ name: 'i' }] },
            suspend: { duration: '0' },
            metrics: {
              vendorP: [
                {
                  name: 'pf_test_bomb_total',
                  help: 'Bomb',
                  labels: [{ key: 'big', value: "{{=sprig.repeat(1048000, 'x') + inputs.parameters.i}}" }],
                  counter: { value: '1' },
                },
              ],
            },
          },
        ],
      } as Workflow['spec']),
    );
    const done = await waitForCompletion(client, ns, 'label-bomb', 90_000);
    expect(done.status?.phase, done.status?.message).toBe('Succeeded');
    const text = await eventually(async () => {
      const t = await scrape();
      return /plugflow_custom_metrics_dropped_total\{reason="label-too-long"\} (\d+)/.exec(t)?.[1] === '150' ? t : undefined;
    }, 'the drop counter at 150');
    expect(text.length).toBeLessThan(2_000_000);
    expect(text).not.toContain('pf_test_bomb_total{');
    const warnings = await eventually(async () => {
      const list = await client.list<{ reason: string; message: string; involvedObject: { name: string } }>(EVENTS, { namespace: ns });
      const mine = list.items.filter((e) => e.involvedObject.name === 'label-bomb' && e.reason === 'MetricRefused');
      return mine.length > 0 ? mine : undefined;
    }, 'a MetricRefused Event');
    expect(warnings[0]!.message).toMatch(/pf_test_bomb_total not recorded: label big is 10480\d\d characters long; at most 256/);
    expect(warnings[0]!.message.length).toBeLessThan(2000);
    expect((await fetch(`http://127.0.0.1:${controller.metricsPort}/healthz`)).status).toBe(200);
  }, 150_000);
});
