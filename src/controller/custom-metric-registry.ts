/**
 * The custom metrics workflows declare (src/metrics/custom-metrics.ts decides what to emit),
 * registered on the controller's own Prometheus registry and served on its /metrics endpoint
 * under the names the workflows give.
 *
 * - A name is bound to the first kind, help and label names it was emitted with; an emission
 *   that disagrees (another workflow using the name differently) is dropped and logged, so one
 *   workflow cannot break another's metric or the endpoint.
 * - Every series remembers when it was last updated; series not updated for `ttlMs` (default
 *   10 min, `PLUGFLOW_METRICS_TTL`) are removed, and a name without series is unregistered, so
 *   the labels of deleted workflows cannot grow the endpoint forever.
 * - Realtime gauges are computed at each scrape: seconds since their start (frozen at the end).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { parseGoDuration } from '../api/index.js';
import type { Emission, MetricKind } from '../metrics/custom-metrics.js';
import type { Logger } from '../log/logger.js';

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

interface Registered {
  kind: MetricKind;
  help: string;
  labelNames: string[];
  buckets?: number[];
  metric: AnyMetric;
  /** Series (labels JSON) → last update (ms). */
  series: Map<string, number>;
  /** Realtime series (labels JSON) → timing. */
  realtime: Map<string, { labels: Record<string, string>; startMs: number; endMs?: number }>;
}

export const DEFAULT_METRICS_TTL_MS = 10 * 60_000;

export function metricsTtlFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.PLUGFLOW_METRICS_TTL;
  return v ? parseGoDuration(v) : DEFAULT_METRICS_TTL_MS;
}

export class CustomMetricRegistry {
  private readonly byName = new Map<string, Registered>();
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly ttlMs = DEFAULT_METRICS_TTL_MS,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
    this.timer = setInterval(() => this.sweep(), Math.max(1000, Math.min(30_000, ttlMs / 2)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  record(emissions: readonly Emission[], workflow: string): void {
    for (const e of emissions) {
      const reg = this.registered(e, workflow);
      if (!reg) continue;
      const key = JSON.stringify(reg.labelNames.map((n) => e.labels[n]));
      reg.series.set(key, this.now());
      if (e.realtime) {
        reg.realtime.set(key, { labels: e.labels, ...e.realtime });
        continue;
      }
      const v = e.value!;
      if (reg.kind === 'counter') {
        if (v < 0) {
          this.log.warn(`custom metric ${e.name} not recorded: a counter cannot go down (value ${v})`, { workflow, where: e.where });
          continue;
        }
        (reg.metric as Counter<string>).inc(e.labels, v);
      } else if (reg.kind === 'gauge') (reg.metric as Gauge<string>).set(e.labels, v);
      else (reg.metric as Histogram<string>).observe(e.labels, v);
    }
  }

  /** Removes series not updated for the TTL, and names left without series. */
  sweep(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [name, reg] of this.byName) {
      for (const [key, at] of reg.series) {
        const rt = reg.realtime.get(key);
        if (rt && rt.endMs === undefined) continue; // still running
        if (at > cutoff) continue;
        reg.series.delete(key);
        reg.realtime.delete(key);
        const values = JSON.parse(key) as (string | undefined)[];
        const labels = Object.fromEntries(reg.labelNames.map((n, i) => [n, values[i] ?? '']));
        (reg.metric as Gauge<string>).remove(labels);
      }
      if (reg.series.size === 0) {
        this.registry.removeSingleMetric(name);
        this.byName.delete(name);
      }
    }
  }

  /** The metric `e` goes to, registered on first use; undefined when `e` disagrees with it. */
  private registered(e: Emission, workflow: string): Registered | undefined {
    const labelNames = Object.keys(e.labels).sort();
    const existing = this.byName.get(e.name);
    if (existing) {
      const same =
        existing.kind === e.kind &&
        existing.help === e.help &&
        JSON.stringify(existing.labelNames) === JSON.stringify(labelNames) &&
        (e.kind !== 'histogram' || JSON.stringify(existing.buckets) === JSON.stringify(e.buckets));
      if (same) return existing;
      this.log.warn(`custom metric ${e.name} not recorded: the name is in use with another kind, help, label set or buckets`, {
        workflow,
        where: e.where,
        registered: { kind: existing.kind, labels: existing.labelNames },
      });
      return undefined;
    }
    if (this.registry.getSingleMetric(e.name)) {
      this.log.warn(`custom metric ${e.name} not recorded: the name is one of the controller's own metrics`, { workflow, where: e.where });
      return undefined;
    }
    const realtime = new Map<string, { labels: Record<string, string>; startMs: number; endMs?: number }>();
    const now = this.now;
    const common = { name: e.name, help: e.help, labelNames, registers: [this.registry] };
    const metric: AnyMetric =
      e.kind === 'counter'
        ? new Counter(common)
        : e.kind === 'histogram'
          ? new Histogram({ ...common, buckets: e.buckets ?? [] })
          : new Gauge({
              ...common,
              collect() {
                for (const rt of realtime.values()) this.set(rt.labels, ((rt.endMs ?? now()) - rt.startMs) / 1000);
              },
            });
    const reg: Registered = {
      kind: e.kind,
      help: e.help,
      labelNames,
      metric,
      series: new Map(),
      realtime,
      ...(e.buckets ? { buckets: e.buckets } : {}),
    };
    this.byName.set(e.name, reg);
    return reg;
  }
}
