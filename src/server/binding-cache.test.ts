/**
 * The binding cache on src/kube's informer, against the in-memory client: start() gives up at
 * once on a refusal and retries transient failures, bindings are compiled and kept in name order,
 * a broken binding is reported once per generation, and staleness reaches /readyz.
 */
import { afterEach, describe, expect, it } from 'vitest';
import winston from 'winston';
import { WORKFLOW_EVENT_BINDINGS } from '../kube/resource.js';
import { eventually } from '../kube/testing/eventually.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { BindingCache, type BindingCacheOptions } from './binding-cache.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import { ServerMetrics } from './metrics.js';

const logger = winston.createLogger({ level: 'error', transports: [new winston.transports.Console({ silent: true })] });

const binding = (name: string, selector = 'true', namespace = 'ns') => ({
  metadata: { name, namespace, generation: 1 },
  spec: { event: { selector }, submit: { workflowTemplateRef: { name: 'tpl' } } },
});

const running: BindingCache[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

function cache(fake: FakeKubeClient, o: Partial<BindingCacheOptions> = {}) {
  const warnings: string[] = [];
  const recorder = {
    record: (b: { metadata: { name: string } }, _type: string, _reason: string, message: string) =>
      warnings.push(`${b.metadata.name}: ${message}`),
  } as unknown as EventRecorder;
  const metrics = new ServerMetrics(false);
  const c = new BindingCache({ client: fake.asClient(), logger, recorder, metrics, ...o });
  running.push(c);
  return { c, warnings, metrics };
}

describe('BindingCache', () => {
  it('fails start() at once when the server account is refused, naming the resource', async () => {
    const fake = new FakeKubeClient();
    fake.failNext(1, 403, { verb: 'list' }, 'workfloweventbindings.plugflow.io is forbidden: User "system:serviceaccount:x:y" cannot list');
    const { c } = cache(fake);
    await expect(c.start(10_000)).rejects.toThrow(
      /^cannot list and watch workfloweventbindings\.plugflow\.io with the server's account: .*403 Forbidden: .*cannot list/,
    );
    expect(fake.callsOf('list')).toHaveLength(1);
    expect(c.synced).toBe(false);
  });

  it('fails start() at once when the CRD is missing (404)', async () => {
    const fake = new FakeKubeClient();
    fake.failNext(1, 404, { verb: 'list' });
    await expect(cache(fake).c.start(10_000)).rejects.toThrow(/404 NotFound/);
  });

  it('retries transient failures (429 while the watch cache warms up, 5xx) and syncs', async () => {
    const fake = new FakeKubeClient();
    fake.seed(WORKFLOW_EVENT_BINDINGS, binding('b'));
    fake.failNext(1, 429, { verb: 'list' });
    fake.failNext(1, 503, { verb: 'list' });
    const { c } = cache(fake);
    await c.start(10_000);
    expect(c.synced).toBe(true);
    expect(fake.callsOf('list').map((x) => x.code)).toEqual([429, 503, 200]);
    expect(c.bindingsIn('ns').map((b) => b.name)).toEqual(['b']);
  });

  it('gives up on transient failures after the deadline', async () => {
    const fake = new FakeKubeClient();
    fake.failNext(1000, 503, { verb: 'list' });
    await expect(cache(fake).c.start(30)).rejects.toThrow(/503/);
  });

  it('keeps bindings per namespace in name order, follows the watch, and warns once per generation about a broken one', async () => {
    const fake = new FakeKubeClient();
    fake.seed(WORKFLOW_EVENT_BINDINGS, binding('zeta'));
    fake.seed(WORKFLOW_EVENT_BINDINGS, binding('alpha'));
    fake.seed(WORKFLOW_EVENT_BINDINGS, binding('elsewhere', 'true', 'other'));
    const { c, warnings, metrics } = cache(fake);
    await c.start(10_000);
    expect(c.bindingsIn('ns').map((b) => b.name)).toEqual(['alpha', 'zeta']);
    expect(c.bindingsIn('other').map((b) => b.name)).toEqual(['elsewhere']);

    fake.seed(WORKFLOW_EVENT_BINDINGS, binding('broken', 'payload.('));
    await eventually(() => c.bindingsIn('ns').length === 3);
    expect(c.bindingsIn('ns').map((b) => [b.name, b.problems.length > 0])).toEqual([
      ['alpha', false],
      ['broken', true],
      ['zeta', false],
    ]);
    expect(warnings).toEqual([expect.stringMatching(/^broken: binding is invalid and will be skipped: /)]);
    expect((await metrics.registry.getSingleMetric('plugflow_event_bindings_invalid')?.get())?.values[0]?.value).toBe(1);
    // A relist (or a change that keeps the generation, like a label) does not warn again.
    await fake.mergePatch(WORKFLOW_EVENT_BINDINGS, 'ns', 'broken', { metadata: { labels: { a: 'b' } } });
    await fake.delete(WORKFLOW_EVENT_BINDINGS, 'ns', 'zeta');
    await eventually(() => c.bindingsIn('ns').length === 2);
    expect(warnings).toHaveLength(1);
    expect((await metrics.registry.getSingleMetric('plugflow_event_bindings')?.get())?.values[0]?.value).toBe(3);
  });

  it('reports a stale watch to /readyz (nothing heard for staleMs), and recovers on the next sign of life', async () => {
    const fake = new FakeKubeClient();
    const { c } = cache(fake, { staleMs: 40, watchdogMs: 60_000 });
    expect(c.readinessProblem()).toBe('informer workfloweventbindings.plugflow.io has not synced yet');
    await c.start(10_000);
    await eventually(() => fake.openWatches === 1);
    expect(c.readinessProblem()).toBeUndefined();
    await eventually(() => c.readinessProblem() !== undefined);
    expect(c.readinessProblem()).toMatch(
      /^informer workfloweventbindings\.plugflow\.io is stale: nothing heard from the API server for \d+s$/,
    );
    fake.bookmark();
    expect(c.readinessProblem()).toBeUndefined();
  });
});
