import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log/logger.js';
import type { Emission } from '../metrics/custom-metrics.js';
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
    expect(text).toContain('runs_total{status="Succeeded"} 2');
    expect(text).toContain('runs_total{status="Failed"} 1');
    expect(text).toContain('queue_len 7');
    expect(text).toContain('took_bucket{le="5"} 1');
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
    expect(await prom.metrics()).toContain('running_seconds{wf="a"} 4');
    reg.record([rt(1_006_000)], 'ns/a');
    advance(10_000);
    expect(await prom.metrics()).toContain('running_seconds{wf="a"} 6');
  });

  it('drops an emission that uses a name with another kind or label set', async () => {
    const { prom, reg } = setup();
    reg.record([counter({ status: 'Succeeded' })], 'ns/a');
    reg.record(
      [{ name: 'runs_total', help: 'Runs', kind: 'gauge', labels: { status: 'x' }, value: 5, where: 'x' }, counter({ other: 'y' })],
      'ns/b',
    );
    const text = await prom.metrics();
    expect(text).toContain('# TYPE runs_total counter');
    expect(text).not.toContain('other=');
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
