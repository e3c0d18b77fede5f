/**
 * The custom metrics workflows declare (src/engine/custom-metrics.ts decides what to emit),
 * registered on the controller's own Prometheus registry and served on its /metrics endpoint
 * under the names the workflows give.
 *
 * The controller is shared by every tenant, so what one workflow can make it hold is bounded:
 *
 * - Every series carries the label `workflow_namespace` (the workflow's namespace; a workflow
 *   cannot set it: validation refuses the key), so two namespaces that use one name write to
 *   their own series, never into each other's.
 * - A name is bound to the first kind, label names and buckets it was emitted with; an emission
 *   that disagrees (another workflow, perhaps of another namespace, using the name differently)
 *   is refused, and the refusal is returned so the controller logs it and records a Warning
 *   Event on the refused workflow: nothing is dropped silently.
 * - Label values longer than `maxLabelValue` characters, series whose label values add up to
 *   more than `maxSeriesBytes`, series beyond `maxSeriesPerMetric` per name, `maxSeriesPerWorkflow`
 *   per workflow and `maxSeries` in all, names beyond `maxNames`, and series that would take the
 *   custom series of a scrape past `maxScrapeBytes` (8 MiB; a histogram series counts each of its
 *   bucket lines) are dropped: each reason is counted in `plugflow_custom_metrics_dropped_total{reason}`
 *   and warned about once per metric and namespace per sweep. A declaration prom-client refuses
 *   leaves nothing registered.
 * - Every series remembers when it was last updated; series not updated for `ttlMs` (default
 *   10 min, `PLUGFLOW_METRICS_TTL`) are removed, and a name without series is unregistered, so
 *   the labels of deleted workflows cannot grow the endpoint forever.
 * - Realtime gauges are computed at each scrape: seconds since their start (frozen at the end).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { parseGoDuration } from '../api/index.js';
import { NAMESPACE_LABEL, type Emission, type MetricKind } from '../engine/index.js';
import type { Logger } from '../log/logger.js';

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

interface Series {
  /** Last update (ms). */
  at: number;
  /** What it adds to a scrape (bytes, estimated): see seriesBytes. */
  bytes: number;
  /** The workflow (`ns/name`) that created it: its per-workflow count. */
  workflow: string;
  labels: Record<string, string>;
}

interface Registered {
  kind: MetricKind;
  labelNames: string[];
  buckets?: number[];
  metric: AnyMetric;
  /** Namespace of the workflow that first emitted it, for clash messages. */
  holder: string;
  /** Series (labels JSON) → its record. */
  series: Map<string, Series>;
  /** Realtime series (labels JSON) → timing. */
  realtime: Map<string, { labels: Record<string, string>; startMs: number; endMs?: number }>;
}

/** Why an emission was not recorded (the label of the dropped counter). */
export type DropReason =
  | 'label-too-long'
  | 'series-too-large'
  | 'scrape-size'
  | 'invalid'
  | 'series-per-metric'
  | 'series-per-workflow'
  | 'series-total'
  | 'names-total'
  | 'name-clash'
  | 'own-name'
  | 'counter-decrease';

/** An emission that was not recorded; `warn` is true the first time its reason is seen for the metric this sweep. */
export interface Refusal {
  where: string;
  name: string;
  reason: DropReason;
  message: string;
  warn: boolean;
}

export interface MetricLimits {
  /** Estimated size of every custom series in one scrape together. */
  maxScrapeBytes: number;
  maxLabelValue: number;
  maxSeriesBytes: number;
  maxSeriesPerMetric: number;
  maxSeriesPerWorkflow: number;
  maxSeries: number;
  maxNames: number;
}

export const DEFAULT_METRIC_LIMITS: Readonly<MetricLimits> = Object.freeze({
  maxScrapeBytes: 8 << 20,
  maxLabelValue: 256,
  maxSeriesBytes: 1024,
  maxSeriesPerMetric: 2000,
  maxSeriesPerWorkflow: 200,
  maxSeries: 10_000,
  maxNames: 500,
});

export const DEFAULT_METRICS_TTL_MS = 10 * 60_000;

export function metricsTtlFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.PLUGFLOW_METRICS_TTL;
  return v ? parseGoDuration(v) : DEFAULT_METRICS_TTL_MS;
}

export class CustomMetricRegistry {
  private readonly byName = new Map<string, Registered>();
  private readonly perWorkflow = new Map<string, number>();
  private seriesCount = 0;
  private scrapeBytes = 0;
  private readonly warned = new Set<string>();
  private readonly dropped: Counter<'reason'>;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly limits: MetricLimits;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly ttlMs = DEFAULT_METRICS_TTL_MS,
    now?: () => number,
    limits: Partial<MetricLimits> = {},
  ) {
    this.now = now ?? Date.now;
    this.limits = { ...DEFAULT_METRIC_LIMITS, ...limits };
    this.dropped = new Counter({
      name: 'plugflow_custom_metrics_dropped_total',
      help: "Custom metric emissions of workflows that were not recorded, by reason (limits of the controller's shared registry, name clashes).",
      labelNames: ['reason'],
      registers: [registry],
    });
    this.timer = setInterval(() => this.sweep(), Math.max(1000, Math.min(30_000, ttlMs / 2)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Series held now (all names). */
  get size(): number {
    return this.seriesCount;
  }

  /** Records the emissions of workflow `ns/name`; returns what was refused, for the log and the workflow's Events. */
  record(emissions: readonly Emission[], workflow: string): Refusal[] {
    const namespace = workflow.slice(0, workflow.indexOf('/'));
    const refused: Refusal[] = [];
    const refuse = (e: Emission, reason: DropReason, message: string): void => {
      this.dropped.inc({ reason });
      const once = `${reason}\u0000${e.name}\u0000${namespace}`;
      const warn = !this.warned.has(once);
      if (warn && this.warned.size < 10_000) this.warned.add(once);
      refused.push({ where: e.where, name: e.name, reason, message: `custom metric ${e.name} not recorded: ${message}`, warn });
    };
    for (const e of emissions) {
      const labels: Record<string, string> = { ...e.labels, [NAMESPACE_LABEL]: namespace };
      const tooLong = Object.entries(e.labels).find(([, v]) => v.length > this.limits.maxLabelValue);
      if (tooLong) {
        refuse(
          e,
          'label-too-long',
          `label ${tooLong[0]} is ${tooLong[1].length} characters long; at most ${this.limits.maxLabelValue} are kept`,
        );
        continue;
      }
      const bytes = Object.values(e.labels).reduce((n, v) => n + v.length, 0);
      if (bytes > this.limits.maxSeriesBytes) {
        refuse(e, 'series-too-large', `its label values add up to ${bytes} characters; at most ${this.limits.maxSeriesBytes} are kept`);
        continue;
      }
      const reg = this.registered(e, namespace, refuse);
      if (!reg) continue;
      const key = JSON.stringify(reg.labelNames.map((n) => labels[n]));
      let series = reg.series.get(key);
      if (!series) {
        const bytes = seriesBytes(e.name, labels, reg);
        const problem = this.roomFor(reg, workflow, bytes);
        if (problem) {
          refuse(e, problem[0], problem[1]);
          continue;
        }
        series = { at: 0, bytes, workflow, labels };
        reg.series.set(key, series);
        this.seriesCount++;
        this.scrapeBytes += bytes;
        this.perWorkflow.set(workflow, (this.perWorkflow.get(workflow) ?? 0) + 1);
      }
      series.at = this.now();
      if (e.realtime) {
        reg.realtime.set(key, { labels, ...e.realtime });
        continue;
      }
      const v = e.value!;
      if (reg.kind === 'counter') {
        if (v < 0) {
          refuse(e, 'counter-decrease', `a counter cannot go down (value ${v})`);
          continue;
        }
        (reg.metric as Counter<string>).inc(labels, v);
      } else if (reg.kind === 'gauge') (reg.metric as Gauge<string>).set(labels, v);
      else (reg.metric as Histogram<string>).observe(labels, v);
    }
    for (const r of refused) if (r.warn) this.log.warn(r.message, { workflow, where: r.where, reason: r.reason });
    return refused;
  }

  /** Why a new series of `reg` for `workflow` (adding `bytes` to a scrape) does not fit, or undefined. */
  private roomFor(reg: Registered, workflow: string, bytes: number): [DropReason, string] | undefined {
    const l = this.limits;
    if (this.scrapeBytes + bytes > l.maxScrapeBytes)
      return ['scrape-size', `the controller's custom series already take ${Math.round(this.scrapeBytes / 1024)} KiB of a scrape`];
    if (reg.series.size >= l.maxSeriesPerMetric) return ['series-per-metric', `the metric already has ${l.maxSeriesPerMetric} series`];
    if ((this.perWorkflow.get(workflow) ?? 0) >= l.maxSeriesPerWorkflow)
      return ['series-per-workflow', `the workflow already has ${l.maxSeriesPerWorkflow} series`];
    if (this.seriesCount >= l.maxSeries) return ['series-total', `the controller already holds ${l.maxSeries} custom series`];
    return undefined;
  }

  /** Removes series not updated for the TTL, and names left without series; warnings may repeat after it. */
  sweep(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [name, reg] of this.byName) {
      for (const [key, series] of reg.series) {
        const rt = reg.realtime.get(key);
        if (rt && rt.endMs === undefined) continue; // still running
        if (series.at > cutoff) continue;
        reg.series.delete(key);
        reg.realtime.delete(key);
        this.seriesCount--;
        this.scrapeBytes -= series.bytes;
        const left = (this.perWorkflow.get(series.workflow) ?? 1) - 1;
        if (left > 0) this.perWorkflow.set(series.workflow, left);
        else this.perWorkflow.delete(series.workflow);
        (reg.metric as Gauge<string>).remove(series.labels);
      }
      if (reg.series.size === 0) {
        this.registry.removeSingleMetric(name);
        this.byName.delete(name);
      }
    }
    this.warned.clear();
  }

  /** The metric `e` goes to, registered on first use; undefined (refused) when `e` disagrees with it. */
  private registered(
    e: Emission,
    namespace: string,
    refuse: (e: Emission, reason: DropReason, message: string) => void,
  ): Registered | undefined {
    const labelNames = [...Object.keys(e.labels), NAMESPACE_LABEL].sort();
    const existing = this.byName.get(e.name);
    if (existing) {
      const same =
        existing.kind === e.kind &&
        JSON.stringify(existing.labelNames) === JSON.stringify(labelNames) &&
        (e.kind !== 'histogram' || JSON.stringify(existing.buckets) === JSON.stringify(e.buckets));
      if (same) return existing;
      const by = existing.holder === namespace ? 'this namespace' : `namespace ${existing.holder}`;
      refuse(
        e,
        'name-clash',
        `the name is in use by ${by} as a ${existing.kind} with labels [${existing.labelNames.join(', ')}]${existing.kind === 'histogram' ? ` and buckets [${existing.buckets?.join(', ')}]` : ''}; use another name or the same kind, labels and buckets`,
      );
      return undefined;
    }
    if (this.registry.getSingleMetric(e.name)) {
      refuse(e, 'own-name', "the name is one of the controller's own metrics");
      return undefined;
    }
    if (this.byName.size >= this.limits.maxNames) {
      refuse(e, 'names-total', `the controller already serves ${this.limits.maxNames} custom metric names`);
      return undefined;
    }
    const realtime = new Map<string, { labels: Record<string, string>; startMs: number; endMs?: number }>();
    const now = this.now;
    const common = { name: e.name, help: e.help, labelNames, registers: [this.registry] };
    let metric: AnyMetric;
    try {
      metric =
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
    } catch (err) {
      // prom-client refused it (a reserved label name…): nothing of it may stay registered.
      this.registry.removeSingleMetric(e.name);
      refuse(e, 'invalid', `prom-client refused it: ${(err as Error).message}`);
      return undefined;
    }
    const reg: Registered = {
      kind: e.kind,
      labelNames,
      metric,
      holder: namespace,
      series: new Map(),
      realtime,
      ...(e.buckets ? { buckets: e.buckets } : {}),
    };
    this.byName.set(e.name, reg);
    return reg;
  }
}

/**
 * What a series adds to a scrape (bytes, estimated): its name and labels on each of its lines —
 * one for a counter or gauge, the buckets plus sum, count and +Inf for a histogram.
 */
function seriesBytes(name: string, labels: Record<string, string>, reg: Pick<Registered, 'kind' | 'buckets'>): number {
  let line = name.length + 40;
  for (const [k, v] of Object.entries(labels)) line += k.length + v.length + 4;
  const lines = reg.kind === 'histogram' ? (reg.buckets?.length ?? 0) + 3 : 1;
  return line * lines;
}
