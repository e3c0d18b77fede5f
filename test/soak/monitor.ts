/**
 * Watching the system while the soak runs: resident memory of the controller, the server and
 * this process (which hosts the pod runner) every few seconds, and the server's event counters
 * (kept per server incarnation, since a killed server takes its counters with it).
 */
import { request } from 'undici';
import type { System } from './system.js';

export interface RssSample {
  /** ms since the soak started. */
  at: number;
  controller?: number;
  server?: number;
  driver: number;
  /** Incarnations at the time, so a restart is visible in the table. */
  controllerIncarnation: number;
  serverIncarnation: number;
}

export interface ServerCounters {
  accepted: number;
  queueFull: number;
  invalid: number;
  shuttingDown: number;
  dispatched: number;
  submitted: number;
  bindingErrors: number;
}

/** One metric's value (summed over its series, filtered by a label text) from a Prometheus page. */
export function metricValue(text: string, name: string, labelFilter?: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    if (labelFilter && !line.includes(labelFilter)) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

export async function scrapeText(url: string): Promise<string | undefined> {
  try {
    const res = await request(url, { headersTimeout: 3000, bodyTimeout: 3000 });
    const text = await res.body.text();
    return res.statusCode === 200 ? text : undefined;
  } catch {
    return undefined;
  }
}

export async function scrapeMetric(url: string, name: string, labelFilter?: string): Promise<number | undefined> {
  const text = await scrapeText(url);
  return text === undefined ? undefined : metricValue(text, name, labelFilter);
}

function serverCounters(text: string): ServerCounters {
  const v = (name: string, filter?: string) => metricValue(text, name, filter) ?? 0;
  return {
    accepted: v('plugflow_events_received_total', 'result="accepted"'),
    queueFull: v('plugflow_events_received_total', 'result="queue_full"'),
    invalid: v('plugflow_events_received_total', 'result="invalid"'),
    shuttingDown: v('plugflow_events_received_total', 'result="shutting_down"'),
    dispatched: v('plugflow_events_dispatched_total'),
    submitted: v('plugflow_event_binding_total', 'outcome="submitted"'),
    bindingErrors:
      v('plugflow_event_binding_total') -
      v('plugflow_event_binding_total', 'outcome="submitted"') -
      v('plugflow_event_binding_total', 'outcome="no_match"'),
  };
}

export class Monitor {
  readonly rss: RssSample[] = [];
  /** Last counters seen per server incarnation. */
  readonly counters = new Map<number, ServerCounters>();
  private timer?: NodeJS.Timeout;
  private scraping?: Promise<void>;

  constructor(
    private readonly system: System,
    private readonly since: number,
    private readonly everyMs: number,
  ) {}

  /**
   * Memory is sampled on a timer, apart from the counter scrape: a scrape that waits on a server
   * being killed or restarted must not leave holes in the memory table.
   */
  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  sample(): void {
    const { controller, server } = this.system;
    this.rss.push({
      at: Date.now() - this.since,
      controller: controller.rssKiB(),
      server: server.rssKiB(),
      driver: Math.round(process.memoryUsage().rss / 1024),
      controllerIncarnation: controller.incarnation,
      serverIncarnation: server.incarnation,
    });
    this.scraping ??= this.scrapeServer().finally(() => (this.scraping = undefined));
  }

  /** Reads the server's counters now (also called just before a server is killed). */
  async scrapeServer(): Promise<void> {
    const incarnation = this.system.server.incarnation;
    const text = await scrapeText(this.system.serverMetricsUrl);
    if (text !== undefined && incarnation === this.system.server.incarnation) this.counters.set(incarnation, serverCounters(text));
  }

  totals(): ServerCounters {
    const t: ServerCounters = { accepted: 0, queueFull: 0, invalid: 0, shuttingDown: 0, dispatched: 0, submitted: 0, bindingErrors: 0 };
    for (const c of this.counters.values()) for (const k of Object.keys(t) as (keyof ServerCounters)[]) t[k] += c[k];
    return t;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.scraping;
    this.sample();
    await this.scraping;
  }
}
