/**
 * The server's Prometheus metrics, on a registry of its own (several servers can run in one
 * process: tests, `plugflow dev`). Labels never carry a token or a caller identity.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Outcomes of one binding for one event (label `outcome` of plugflow_event_binding_total). */
export const BINDING_OUTCOMES = [
  'submitted',
  'deduplicated',
  'no_match',
  'invalid_binding',
  'selector_error',
  'parameter_error',
  'metadata_error',
  'template_not_found',
  'forbidden',
  'unauthorized',
  'name_clash',
  'submit_error',
] as const;
export type BindingOutcome = (typeof BINDING_OUTCOMES)[number];

/** What became of an event at the endpoint (label `result` of plugflow_events_received_total). */
export type EventReceipt =
  | 'accepted'
  | 'duplicate'
  | 'queue_full'
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'busy'
  | 'bus_unavailable'
  | 'shutting_down';

/** What became of one delivery of a stored event (label `result` of plugflow_event_bus_deliveries_total). */
export type BusDelivery = 'acked' | 'retry' | 'dead_letter';

/**
 * Children of a labelled metric, looked up once per label set: prom-client hashes the labels on
 * every `labels()` call, which shows on the event endpoint's hot path. The label values come from
 * fixed sets (routes, methods, statuses, receipts), so the map stays small.
 */
class Children<C> {
  private readonly map = new Map<string, C>();
  constructor(private readonly make: (labels: string[]) => C) {}

  get(...labels: string[]): C {
    const key = labels.join('\u0000');
    let child = this.map.get(key);
    if (!child) this.map.set(key, (child = this.make(labels)));
    return child;
  }
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requestCounts = new Children((l) => this.requests.labels(l[0]!, l[1]!, l[2]!));
  private readonly requestTimes = new Children((l) => this.requestSeconds.labels(l[0]!));
  private readonly receiptCounts = new Children((l) => this.eventsReceived.labels(l[0]!));
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly requestSeconds: Histogram<'route'>;
  readonly eventsReceived: Counter<'result'>;
  readonly queueDepth: Gauge;
  readonly queueCapacity: Gauge;
  readonly eventsDispatched: Counter;
  readonly dispatchSeconds: Histogram;
  readonly eventToWorkflowSeconds: Histogram;
  readonly bindingOutcomes: Counter<'namespace' | 'binding' | 'outcome'>;
  readonly bindingsCached: Gauge;
  readonly bindingCompileErrors: Gauge;
  readonly busConnected: Gauge;
  readonly busPublishSeconds: Histogram;
  readonly busDeliveries: Counter<'result'>;

  /** One answered request: its count by route, method and status, and its time by route. */
  recordRequest(route: string, method: string, status: number, seconds: number): void {
    this.requestCounts.get(route, method, String(status)).inc();
    this.requestTimes.get(route).observe(seconds);
  }

  /** What became of one event at the endpoint. */
  recordReceipt(receipt: EventReceipt): void {
    this.receiptCounts.get(receipt).inc();
  }

  constructor(withProcessMetrics = true) {
    const registers = [this.registry];
    if (withProcessMetrics) collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'plugflow_server_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'plugflow_server_request_duration_seconds',
      help: 'Time from request to reply by route',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.eventsReceived = new Counter({
      name: 'plugflow_events_received_total',
      help: 'Events at the event endpoint by result (accepted, queue_full, invalid, unauthorized, forbidden, rate_limited, busy, shutting_down)',
      labelNames: ['result'],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'plugflow_event_queue_depth',
      help: 'Events accepted and not yet dispatched (waiting or in a worker)',
      registers,
    });
    this.queueCapacity = new Gauge({
      name: 'plugflow_event_queue_capacity',
      help: 'Most events in process at once (--event-operation-queue-size)',
      registers,
    });
    this.eventsDispatched = new Counter({
      name: 'plugflow_events_dispatched_total',
      help: 'Events whose bindings were all evaluated',
      registers,
    });
    this.dispatchSeconds = new Histogram({
      name: 'plugflow_event_dispatch_duration_seconds',
      help: 'Time a worker spent on one event (all bindings)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.eventToWorkflowSeconds = new Histogram({
      name: 'plugflow_event_to_workflow_seconds',
      help: 'Time from an event reaching the endpoint to the workflow it caused being created',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.bindingOutcomes = new Counter({
      name: 'plugflow_event_binding_total',
      help: 'Per binding and event: submitted, no_match, or the failure (see src/server/README.md)',
      labelNames: ['namespace', 'binding', 'outcome'],
      registers,
    });
    this.bindingsCached = new Gauge({ name: 'plugflow_event_bindings', help: 'WorkflowEventBindings in the cache', registers });
    this.busConnected = new Gauge({
      name: 'plugflow_event_bus_connected',
      help: '1 while the server is connected to its event bus (--event-bus), 0 while not; absent without a bus',
      registers,
    });
    this.busPublishSeconds = new Histogram({
      name: 'plugflow_event_bus_store_seconds',
      help: 'Time to store an accepted event in the event bus (publish until the replicated stream acknowledged it)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.busDeliveries = new Counter({
      name: 'plugflow_event_bus_deliveries_total',
      help: 'Deliveries of stored events to this replica: acked (its workflows exist or its failures are recorded), retry (redelivered later), deferred (its namespace held its share of this replica: put back for a moment), dead_letter',
      labelNames: ['result'],
      registers,
    });
    this.bindingCompileErrors = new Gauge({
      name: 'plugflow_event_bindings_invalid',
      help: 'Cached bindings whose expressions do not compile',
      registers,
    });
  }
}
