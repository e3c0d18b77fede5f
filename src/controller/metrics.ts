/**
 * The controller's Prometheus metrics, on a registry of its own (several controllers can live in
 * one process — tests, `plugflow dev` — without clashing on the global registry).
 *
 * Gauges that mirror live state (queue depth, workflows by phase, cache age) are computed when
 * scraped, from callbacks the controller installs, so they can never drift from the truth.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { WRITE_VERBS, type RequestRecord } from '../kube/client.js';

export interface LiveState {
  queueDepth(): number;
  inFlight(): number;
  workflowsByPhase(): Record<string, number>;
  informerAges(): Record<string, number>;
  isLeader(): boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileDuration: Histogram<'result'>;
  /** Where a reconcile's time goes (hydrate, engine, offload, status, features, actions): what to tune on huge workflows. */
  readonly reconcileStage: Histogram<'stage'>;
  readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly apiErrors: Counter<'verb' | 'resource' | 'code'>;
  readonly apiWrites: Counter<'verb' | 'resource'>;
  readonly statusConflicts: Counter;
  /** Finished results an engine run would have changed, put back by its lifecycle rule: each one an engine bug. */
  readonly lifecycleRepairs: Counter;
  readonly podsCreated: Counter;
  /** Workflows written to the archive: archived, already (a repeat), failed. */
  readonly archiveWrites: Counter<'result'>;
  /** Archived workflows removed by retention. */
  readonly archivePruned: Counter;
  private live?: LiveState;

  constructor(opts: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'plugflow_controller_' });
    const self = this;
    this.archiveWrites = new Counter({
      name: 'plugflow_archive_writes_total',
      help: 'Finished workflows written to the archive: archived, already (written before), failed (the database did not take it; retried)',
      labelNames: ['result'],
      registers,
    });
    this.archivePruned = new Counter({
      name: 'plugflow_archive_pruned_total',
      help: 'Archived workflows removed by retention (--archive-ttl, --archive-keep-per-namespace)',
      registers,
    });
    new Gauge({
      name: 'plugflow_controller_queue_depth',
      help: 'Workflow keys waiting in the work queue (ready to process).',
      registers,
      collect() {
        this.set(self.live?.queueDepth() ?? 0);
      },
    });
    new Gauge({
      name: 'plugflow_controller_reconciles_in_flight',
      help: 'Workflow keys being reconciled right now.',
      registers,
      collect() {
        this.set(self.live?.inFlight() ?? 0);
      },
    });
    new Gauge({
      name: 'plugflow_controller_workflows',
      help: 'Workflows in the cache by phase ("" = not started yet).',
      labelNames: ['phase'],
      registers,
      collect() {
        this.reset();
        for (const [phase, n] of Object.entries(self.live?.workflowsByPhase() ?? {})) this.set({ phase }, n);
      },
    });
    new Gauge({
      name: 'plugflow_controller_informer_last_sync_age_seconds',
      help: 'Seconds since each informer last heard from the API server (list, event or bookmark).',
      labelNames: ['informer'],
      registers,
      collect() {
        this.reset();
        for (const [informer, ms] of Object.entries(self.live?.informerAges() ?? {}))
          this.set({ informer }, Number.isFinite(ms) ? ms / 1000 : -1);
      },
    });
    new Gauge({
      name: 'plugflow_controller_is_leader',
      help: '1 while this controller holds the leader lease (always 1 without leader election).',
      registers,
      collect() {
        this.set(self.live?.isLeader() ? 1 : 0);
      },
    });
    this.reconcileDuration = new Histogram({
      name: 'plugflow_controller_reconcile_duration_seconds',
      help: 'Time to reconcile one workflow key, by result (success, error, deferred).',
      labelNames: ['result'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.reconcileStage = new Histogram({
      name: 'plugflow_controller_reconcile_stage_seconds',
      help: 'Time spent in each stage of a reconcile: hydrate (read offloaded nodes), engine, offload (plan and database write of changed nodes), status (the status write), features, actions.',
      labelNames: ['stage'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.apiRequests = new Counter({
      name: 'plugflow_controller_api_requests_total',
      help: 'Kubernetes API requests by verb, resource and HTTP status (0 = transport failure).',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.apiErrors = new Counter({
      name: 'plugflow_controller_api_errors_total',
      help: 'Kubernetes API requests that failed (status >= 400 or transport failure), by verb, resource and status.',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.apiWrites = new Counter({
      name: 'plugflow_controller_api_writes_total',
      help: 'Kubernetes API write requests (create, update, patch, delete) sent, by verb and resource.',
      labelNames: ['verb', 'resource'],
      registers,
    });
    this.statusConflicts = new Counter({
      name: 'plugflow_controller_status_conflicts_total',
      help: 'Workflow status writes refused with 409 Conflict (re-read and re-run).',
      registers,
    });
    this.lifecycleRepairs = new Counter({
      name: 'plugflow_controller_engine_lifecycle_repairs_total',
      help: 'Finished node results an engine run would have changed and its lifecycle rule kept (each is an engine bug; the log names the workflow and nodes).',
      registers,
    });
    this.podsCreated = new Counter({
      name: 'plugflow_controller_pods_created_total',
      help: 'Pods (step and agent) this controller created successfully.',
      registers,
    });
  }

  /** Installs the callbacks the gauges read when scraped. */
  bind(live: LiveState): void {
    this.live = live;
  }

  /** The KubeClient hook: counts every request, its errors and its writes. */
  readonly onRequest = (r: RequestRecord): void => {
    const code = String(r.code);
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code });
    if (r.code === 0 || r.code >= 400) this.apiErrors.inc({ verb: r.verb, resource: r.resource, code });
    if (WRITE_VERBS.has(r.verb)) this.apiWrites.inc({ verb: r.verb, resource: r.resource });
  };

  /** Total writes sent so far (all verbs and resources). */
  async totalWrites(): Promise<number> {
    const m = await this.apiWrites.get();
    return m.values.reduce((sum, v) => sum + v.value, 0);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
