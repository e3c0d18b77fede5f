import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log/logger.js';
import type { Emission } from '../engine/custom-metrics.js';
import { CustomMetricRegistry } from './custom-metric-registry.js';

const log = createLogger('test', 'error');
let registries: CustomMetricRegistry[] = [];
afterEach(() => {
  for (const r of registries) r.stop();
  registries = [];
});

function setup(ttlMs = 60_000) {
  let now = 1_000_000;
  const prom = new Registry();
  const reg = new CustomMetricRegistry(prom, log, ttlMs, () => now);
  registries.push(reg);
  return { prom, reg, advance: (ms: number) => (now += ms) };
}
const counter = (labels: Record<string, string>, value = 1): Emission => ({
  name: 'runs_total',
  help: 'Runs',
  kind: 'counter',
  labels,
  value,
  where: 'x',
});

describe('CustomMetricRegistry', () => {
  it('adds counters, sets gauges, observes histograms, and serves them under their own names', async () => {
    const { prom, reg } = setup();
    reg.record([counter({ status: 'Succeeded' }), counter({ status: 'Succeeded' }), counter({ status: 'Failed' })], 'ns/wf');
    reg.record([{ name: 'queue_len', help: 'Queue', kind: 'gauge', labels: {}, value: 7, where: 'x' }], 'ns/wf');
    reg.record([{ name: 'took', help: 'Took', kind: 'histogram', labels: {}, value: 3, buckets: [1, 5], where: 'x' }], 'ns/wf');
    const text = await prom.metrics();
    expect(text).toContain('runs_total{status="Succeeded",workflow_namespace="ns"} 2');
    expect(text).toContain('runs_total{status="Failed",workflow_namespace="ns"} 1');
    expect(text).toContain('queue_len{workflow_namespace="ns"} 7');
    expect(text).toContain('took_bucket{le="5",workflow_namespace="ns"} 1');
  });

  it('computes a realtime gauge at each scrape and freezes it at the end', async () => {
    const { prom, reg, advance } = setup();
    const rt = (endMs?: number): Emission => ({
      name: 'running_seconds',
      help: 'Running',
      kind: 'gauge',
      labels: { wf: 'a' },
      realtime: { startMs: 1_000_000, ...(endMs ? { endMs } : {}) },
      where: 'x',
    });
    reg.record([rt()], 'ns/a');
    advance(4_000);
    expect(await prom.metrics()).toContain('running_seconds{wf="a",workflow_namespace="ns"} 4');
    reg.record([rt(1_006_000)], 'ns/a');
    advance(10_000);
    expect(await prom.metrics()).toContain('running_seconds{wf="a",workflow_namespace="ns"} 6');
  });

  it('refuses, visibly, an emission that uses a name with another kind or label set', async () => {
    const { prom, reg } = setup();
    reg.record([counter({ status: 'Succeeded' })], 'team-a/a');
    const refused = reg.record(
      [{ name: 'runs_total', help: 'Runs', kind: 'gauge', labels: { status: 'x' }, value: 5, where: 'x' }, counter({ other: 'y' })],
      'team-b/b',
    );
    const text = await prom.metrics();
    expect(text).toContain('# TYPE runs_total counter');
    expect(text).not.toContain('other=');
    expect(refused.map((r) => [r.reason, r.warn])).toEqual([
      ['name-clash', true],
      ['name-clash', false],
    ]);
    expect(refused[0]!.message).toMatch(
      /runs_total not recorded: the name is in use by namespace team-a as a counter with labels \[status, workflow_namespace\]/,
    );
    expect(text).toMatch(/plugflow_custom_metrics_dropped_total\{reason="name-clash"\} 2/);
  });

  it('keeps two namespaces that use one name in their own series: neither writes into the other', async () => {
    const { prom, reg } = setup();
    reg.record([counter({ status: 'Succeeded' }, 5)], 'team-a/x');
    reg.record([counter({ status: 'Succeeded' }, 1)], 'team-b/x');
    const text = await prom.metrics();
    expect(text).toContain('runs_total{status="Succeeded",workflow_namespace="team-a"} 5');
    expect(text).toContain('runs_total{status="Succeeded",workflow_namespace="team-b"} 1');
  });

  it('removes series not updated for the TTL, and the name once it has none', async () => {
    const { prom, reg, advance } = setup(60_000);
    reg.record([counter({ wf: 'old' })], 'ns/old');
    advance(50_000);
    reg.record([counter({ wf: 'new' })], 'ns/new');
    advance(20_000);
    reg.sweep();
    let text = await prom.metrics();
    expect(text).not.toContain('wf="old"');
    expect(text).toContain('wf="new"');
    advance(60_000);
    reg.sweep();
    text = await prom.metrics();
    expect(text).not.toContain('runs_total');
  });
});

describe('CustomMetricRegistry: what one workflow can make the shared controller hold is bounded', () => {
  it('drops a label value over the length limit (the 1 MiB label) with one warning, and counts it', async () => {
    const { prom, reg } = setup();
    const huge = 'x'.repeat(1 << 20);
    const first = reg.record([counter({ node: huge })], 'ns/big');
    const again = reg.record([counter({ node: huge })], 'ns/big');
    expect(first).toMatchObject([
      { reason: 'label-too-long', warn: true, message: expect.stringMatching(/label node is 1048576 characters long; at most 256/) },
    ]);
    expect(again).toMatchObject([{ reason: 'label-too-long', warn: false }]);
    const text = await prom.metrics();
    expect(text.length).toBeLessThan(10_000);
    expect(text).toContain('plugflow_custom_metrics_dropped_total{reason="label-too-long"} 2');
  });

  it('caps series per workflow, per metric and in all, and the number of names', async () => {
    const { prom, reg } = setup();
    const small = new CustomMetricRegistry(new Registry(), log, 60_000, () => 0, {
      maxSeriesPerWorkflow: 3,
      maxSeriesPerMetric: 5,
      maxSeries: 7,
      maxNames: 2,
    });
    registries.push(small);
    const many = (wf: string, n: number, name = 'runs_total') =>
      small.record(
        Array.from({ length: n }, (_, i) => ({ ...counter({ i: String(i) }), name })),
        wf,
      );
    expect(many('a/w', 10).map((r) => r.reason)).toEqual(Array(7).fill('series-per-workflow'));
    expect(many('b/w', 3).map((r) => r.reason)).toEqual(['series-per-metric']);
    expect(small.size).toBe(5);
    expect(many('c/w', 2, 'other_total')).toEqual([]);
    expect(many('d/w', 2, 'other2_total').map((r) => r.reason)).toEqual(['names-total', 'names-total']);
    expect(many('e/w', 1, 'other_total').map((r) => r.reason)).toEqual(['series-total']);
    expect(small.size).toBe(7);
    // The big registry of setup() was not touched.
    expect(await prom.metrics()).not.toContain('runs_total{');
    expect(reg.size).toBe(0);
  });

  it('150 steps with a 1 MiB label each leave a scrape of a few kilobytes', async () => {
    const { prom, reg } = setup();
    const label = 'y'.repeat(1 << 20);
    for (let i = 0; i < 150; i++) reg.record([counter({ step: `${i}-${label}` })], 'ns/attack');
    const text = await prom.metrics();
    expect(text.length).toBeLessThan(10_000);
    expect(reg.size).toBe(0);
  });

  it('frees the per-workflow count when its series expire', () => {
    const { reg, advance } = setup(60_000);
    const small = new CustomMetricRegistry(new Registry(), log, 60_000, () => now2, { maxSeriesPerWorkflow: 2 });
    let now2 = 0;
    registries.push(small);
    expect(small.record([counter({ i: '1' }), counter({ i: '2' }), counter({ i: '3' })], 'ns/a')).toHaveLength(1);
    now2 += 120_000;
    small.sweep();
    expect(small.record([counter({ i: '4' }), counter({ i: '5' })], 'ns/a')).toHaveLength(0);
    advance(0);
    expect(reg.size).toBe(0);
  });
});

describe('CustomMetricRegistry: found by the tenant-cost fuzz', () => {
  it('a histogram label prom-client refuses (le) is refused and leaves nothing registered; the name stays usable', async () => {
    const { prom, reg } = setup();
    const hist = (labels: Record<string, string>): Emission => ({
      name: 'took',
      help: 'Took',
      kind: 'histogram',
      labels,
      value: 1,
      buckets: [1, 5],
      where: 'x',
    });
    expect(() => reg.record([hist({ le: '1' })], 'ns/a')).not.toThrow();
    expect(reg.record([hist({ le: '1' })], 'ns/a')).toMatchObject([{ reason: 'invalid' }]);
    expect(await prom.metrics()).not.toContain('# HELP took');
    expect(reg.record([hist({ step: 'a' })], 'ns/b')).toEqual([]);
    expect(await prom.metrics()).toContain('took_bucket{le="5",step="a",workflow_namespace="ns"} 1');
  });

  it("bounds a scrape's size by what each series writes, histogram buckets included", async () => {
    const small = new CustomMetricRegistry(new Registry(), log, 60_000, () => 0, { maxScrapeBytes: 64 * 1024 });
    registries.push(small);
    const buckets = Array.from({ length: 64 }, (_, i) => i + 1);
    const refused = small.record(
      Array.from({ length: 200 }, (_, i) => ({
        name: 'wide',
        help: 'Wide',
        kind: 'histogram' as const,
        labels: { k: `${i}-${'v'.repeat(200)}` },
        value: 1,
        buckets,
        where: 'x',
      })),
      'ns/w',
    );
    expect(refused.length).toBeGreaterThan(150);
    expect(refused[0]!.reason).toBe('scrape-size');
    expect((await small['registry'].metrics()).length).toBeLessThan(80 * 1024);
  });
});
