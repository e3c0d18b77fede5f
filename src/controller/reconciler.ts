/**
 * Reconciles one workflow key: read the workflow and what it owns from the caches, ask the
 * engine what the status should be and what must happen, persist the status, then act.
 *
 * Order and conflicts (src/engine/contract.ts): the status is persisted BEFORE the actions are
 * applied; every action is idempotent and re-emitted while still needed, so a crash between the
 * two loses nothing. The status write is conditional on the resourceVersion it was computed
 * from; on 409 the workflow is read fresh from the API server and the engine runs again on it,
 * so a result another writer stored is built upon, never overwritten — and the engine's lifecycle
 * rule (engine/node-lifecycle.ts) makes sure no finished node is ever reverted.
 *
 * The engine is pure, so an exception it throws is a bug that the same inputs would repeat on
 * every retry: the workflow would never be decided. Such a workflow is ended in Error with a
 * message naming the internal failure (and the failure is logged with its stack). Errors of the
 * Kubernetes API (status writes, actions) are not the engine's and are retried with backoff —
 * except a status too large to store, which ends the workflow in Error at once (status-size.ts).
 */
import {
  FINAL_WORKFLOW_PHASES,
  inflateWorkflow,
  LABEL_COMPLETED,
  LABEL_PHASE,
  needsHydration,
  type Workflow,
  type WorkflowPhase,
  type WorkflowStatus,
  type WorkflowTemplate,
} from '../api/index.js';
import type { Observations, ReconcileResult, SourceRef } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict, isNotFound, isTooLarge } from '../kube/errors.js';
import { splitKey, type KubeObject } from '../kube/object-store.js';
import { CLUSTER_WORKFLOW_TEMPLATES, WORKFLOW_TEMPLATES, WORKFLOWS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import type { ActionApplier } from './action-applier.js';
import type { ControllerCaches } from './caches.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import type { FailureMemory } from './failure-memory.js';
import type { NodeOffload } from './node-offload.js';
import type { LostNodeWatch } from './lost-nodes.js';
import type { ControllerMetrics } from './metrics.js';
import { buildObservations, cachedTemplates, type ObservationInputs } from './observations.js';
import { boundedStatus, DEFAULT_MAX_STATUS_BYTES, refusedAsTooLargeMessage, serializedSize } from './status-size.js';
import { writeStatus, type StatusMetadata } from './status-writer.js';
import { announcePhase } from './phase-announcements.js';
import { errorMessage } from '../log/error-message.js';
import { engineFailureStatus } from './engine-failure.js';
import { mergeOutcomes, type FeatureOutcome, type ReconcileRun, type StoredRun, type WorkflowFeature } from './features/index.js';
import { mayWaitForTemplates, TEMPLATE_LAG_RETRY_MS, templatesBehind } from './template-lag.js';
import { PodLag, POD_LAG_RETRY_MS } from './pod-lag.js';

type Obj<T> = T & KubeObject;

export type Engine = (workflow: Workflow, observations: Observations) => ReconcileResult;

export interface ReconcilerDeps {
  client: KubeClient;
  caches: ControllerCaches;
  applier: ActionApplier;
  failures: FailureMemory;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
  engine: Engine;
  pluginsEnabled: boolean;
  /** Workflows may declare their own plugins (spec.executorPlugins); off refuses those that do. */
  workflowLevelPluginsEnabled?: boolean;
  /** The registered artifact drivers' names (a workflow naming another is refused). */
  artifactDrivers?: string[];
  /** Conflicting status writes tolerated in one reconcile before it is retried with backoff. */
  maxConflicts?: number;
  /** With several active replicas (sharding.ts): this replica, recorded in `status.controller`. */
  identity?: string;
  /** Nodes found lost (lost-nodes.ts): unfinished step pods there end their steps. */
  lostNodes?: Pick<LostNodeWatch, 'reasonFor'>;
  /** With several active replicas: ms to wait before looking again while another live replica holds `wf`. */
  shardOwner?: (wf: Workflow) => number | undefined;
  /** Largest serialized workflow written; a bigger status ends the workflow in Error (status-size.ts). */
  maxStatusBytes?: number;
  /** Node maps whose JSON is larger are stored compressed (compressed-nodes.ts; default 256 KiB). */
  compressNodesAbove?: number;
  /** Most items one loop may expand to (Observations.maxLoopItems; default 100,000). */
  maxLoopItems?: number;
  /** Node status too large for the object goes to the database (node-offload.ts); absent: never offloaded. */
  offload?: NodeOffload;
  /**
   * The features beside the engine's core (features/feature.ts: locks, memoize caches, parameter
   * ConfigMaps, resource runs, artifact GC, custom metrics, plugin exclusions), called in order.
   */
  features?: readonly WorkflowFeature[];
}

export type ReconcileOutcome = FeatureOutcome;

export class Reconciler {
  private readonly features: readonly WorkflowFeature[];
  private readonly podLag: PodLag; // is the pod cache behind the status? (pod-lag.ts)
  constructor(private readonly deps: ReconcilerDeps) {
    this.features = deps.features ?? [];
    this.podLag = new PodLag(deps.client, deps.log);
  }

  /** The template informers, as the observation builders take them. */
  private readonly templateCaches: Pick<ObservationInputs, 'workflowTemplate' | 'clusterWorkflowTemplate'> = {
    workflowTemplate: (n, name) => this.deps.caches.workflowTemplates.get(n, name),
    clusterWorkflowTemplate: (name) => this.deps.caches.clusterWorkflowTemplates.get(undefined, name),
  };

  async reconcile(key: string): Promise<ReconcileOutcome> {
    const { namespace, name } = splitKey(key);
    if (!namespace) return {};
    let wf = this.deps.caches.workflow(namespace, name);
    if (!wf) return {};
    wf = await this.hydrate(wf);
    // A deleted workflow is only held by finalizers; ours waits for its artifacts (artifact-gc.ts).
    if (wf.metadata.deletionTimestamp) {
      const deleting = wf;
      let run: ReconcileRun | undefined;
      let outcome: ReconcileOutcome = {};
      for (const f of this.features) outcome = mergeOutcomes(outcome, await f.deleting?.(deleting, () => (run ??= this.run(deleting))));
      return outcome;
    }
    const before: WorkflowPhase = wf.status?.phase ?? '';
    if (!FINAL_WORKFLOW_PHASES.includes(before) && typeof wf.status?.compressedNodes === 'string' && wf.status.nodes === undefined)
      return this.unreadableNodes(wf);
    if (!FINAL_WORKFLOW_PHASES.includes(before)) {
      // Active-active: a live replica that recorded itself keeps the workflow until it lets go.
      const waitFor = this.deps.shardOwner?.(wf);
      if (waitFor !== undefined) return { requeueAtMs: Date.now() + waitFor };
      for (const f of this.features) await f.prepare?.(wf);
      // The engine checks template references on its first run (a workflow not yet started): only
      // then can lagging caches fail it, and later reconciles skip the walk.
      if ((before === '' || before === 'Pending') && (await this.templatesLag(wf)))
        return { requeueAtMs: Date.now() + TEMPLATE_LAG_RETRY_MS };
      // With replicas a new owner's pod watch can lag the status it reads; alone, the walk is not paid.
      if (this.deps.identity !== undefined && (await this.podLag.behind(wf, this.deps.caches.podsOf(namespace, name))).length > 0)
        return { requeueAtMs: Date.now() + POD_LAG_RETRY_MS };
    }

    const stored = await this.store(key, wf);
    if (!stored) return {};
    let t = performance.now();
    wf = stored.workflow;
    const { run: result, final } = stored;
    const phase = result.status.phase ?? '';
    // Before the actions: locks settle, metrics are recorded, the artifact GC finalizer is added
    // before the first pod can store an artifact.
    for (const f of this.features) await f.stored?.(stored);
    t = this.lap('features', t);
    if (phase !== before) announcePhase(this.deps, wf, before, phase, result.status.message);
    // The phase labels went with the status (status-writer.ts).
    const applied = await this.deps.applier.apply({ ...wf, spec: result.effective.spec }, result.actions);
    t = this.lap('actions', t);
    let outcome: ReconcileOutcome = applied;
    if (final) {
      await this.deps.applier.deleteAgent(wf);
      if (!applied.requeueNow) this.deps.failures.forget(wf.metadata.uid!);
      for (const f of this.features) outcome = mergeOutcomes(outcome, await f.finished?.(stored, applied));
      this.lap('features', t);
    }
    return outcome;
  }

  /**
   * Runs the engine and stores the status it computed, conditionally on the resourceVersion it
   * was computed from: on a conflict the workflow is read again and the engine runs on the fresh
   * copy; a status the API server refuses as too large ends the workflow in Error. Undefined:
   * the workflow went away meanwhile.
   */
  private async store(key: string, wf: Obj<Workflow>): Promise<StoredRun | undefined> {
    const namespace = wf.metadata.namespace!;
    const name = wf.metadata.name!;
    let result: ReconcileRun | undefined;
    // Set when the API server refused a status as too large: 1 keeps the stored nodes, 2 drops them.
    let refusedAsTooLarge: { attempt: number; message: string } | undefined;
    let last: ReconcileRun | undefined;
    // The status the stored one was computed from: metrics count what changed from it.
    let statusBefore: WorkflowStatus | undefined;
    for (let conflicts = 0; !result;) {
      let t = performance.now();
      // After a refusal the engine need not run again (a large status is slow to compute).
      last = refusedAsTooLarge && last ? last : this.run(wf);
      // A waiter served now starts in this reconcile: the engine runs again with the grant.
      if (!refusedAsTooLarge && (await this.rerun(wf, last))) last = this.run(wf, last);
      t = this.lap('engine', t);
      // A workflow with too many nodes stores them in the database (node-offload.ts): its object
      // gets the summary, which is also what is measured against the size limit.
      let plan = this.deps.offload?.plan(wf, last.status, last.nodeDelta);
      let computed = this.bounded(wf, last, refusedAsTooLarge, plan?.stored);
      if (computed.status !== last.status) plan = this.deps.offload?.plan(wf, computed.status);
      // Active-active (sharding.ts): the writer is recorded, so a take-over is one visible write.
      if (
        this.deps.identity !== undefined &&
        computed.status.controller !== this.deps.identity &&
        !FINAL_WORKFLOW_PHASES.includes(computed.status.phase ?? '')
      ) {
        computed = { ...computed, status: { ...computed.status, controller: this.deps.identity } };
        if (plan) plan = { ...plan, stored: { ...plan.stored, controller: this.deps.identity } };
      }
      this.deps.caches.expectStatus(namespace, name, plan ? plan.stored : computed.status);
      try {
        const base = wf.status;
        if (plan) await this.deps.offload!.save(plan);
        t = this.lap('offload', t);
        const status = plan ? plan.stored : computed.status;
        const meta = this.statusMetadata(wf, computed, computed.status);
        let written = await writeStatus(this.deps.client, wf, status, this.deps.compressNodesAbove, meta);
        statusBefore = base;
        if (written) {
          if (plan) written = this.deps.offload!.attach(written, plan);
          this.deps.caches.rememberWorkflow(written);
          wf = written;
        }
        this.lap('status', t);
        result = computed;
      } catch (err) {
        if (isTooLarge(err) && (refusedAsTooLarge?.attempt ?? 0) < 2) {
          // Never retried as is: the same write cannot succeed. End the workflow in Error.
          const size = serializedSize(wf, computed.status, this.deps.compressNodesAbove);
          const nodes = Object.keys(computed.status.nodes ?? {}).length;
          refusedAsTooLarge = {
            attempt: (refusedAsTooLarge?.attempt ?? 0) + 1,
            message: refusedAsTooLarge?.message ?? refusedAsTooLargeMessage(size, nodes, errorMessage(err)),
          };
          this.deps.log.warn('the API server refused the status as too large; ending the workflow in Error', {
            workflow: key,
            bytes: size,
            nodes,
            error: errorMessage(err),
          });
          continue;
        }
        if (!isConflict(err) || ++conflicts > (this.deps.maxConflicts ?? 5)) throw err;
        this.deps.metrics.statusConflicts.inc();
        this.deps.log.debug('status write conflicted; re-reading the workflow', { workflow: key, attempt: conflicts });
        try {
          wf = await this.hydrate(inflateWorkflow(await this.deps.client.get<Obj<Workflow>>(WORKFLOWS, namespace, name), true));
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
        this.deps.caches.rememberWorkflow(wf);
        if (wf.metadata.deletionTimestamp) return undefined;
      }
    }

    const final = FINAL_WORKFLOW_PHASES.includes(result.status.phase ?? '');
    return { workflow: wf, run: result, before: statusBefore, final };
  }

  /** `wf` with its whole node set when its nodes are offloaded (read from memory or the database). */
  private async hydrate(wf: Obj<Workflow>): Promise<Obj<Workflow>> {
    if (!this.deps.offload || !needsHydration(wf.status)) return wf;
    const t = performance.now();
    const hydrated = await this.deps.offload.hydrate(wf);
    this.lap('hydrate', t);
    return hydrated;
  }

  /** Records the time since `since` as `stage`'s; returns now (the next stage's start). */
  private lap(stage: 'hydrate' | 'engine' | 'offload' | 'status' | 'features' | 'actions', since: number): number {
    const now = performance.now();
    this.deps.metrics.reconcileStage.observe({ stage }, (now - since) / 1000);
    return now;
  }

  /** Whether a feature needs the engine to run again before the status is written (a lock granted now). */
  private async rerun(wf: Obj<Workflow>, run: ReconcileRun): Promise<boolean> {
    let again = false;
    for (const f of this.features) if (await f.rerun?.(wf, run)) again = true;
    return again;
  }

  /**
   * A workflow whose stored `status.compressedNodes` cannot be read (the informer left it as
   * stored): running it without its nodes would start every step again, so it ends in Error.
   */
  private async unreadableNodes(wf: Obj<Workflow>): Promise<ReconcileOutcome> {
    let message = 'status.compressedNodes cannot be read';
    try {
      inflateWorkflow(wf);
    } catch (err) {
      message = errorMessage(err);
    }
    const now = new Date().toISOString();
    await writeStatus(this.deps.client, wf, { ...wf.status, phase: 'Error', message, finishedAt: now }, this.deps.compressNodesAbove, {
      labels: { [LABEL_PHASE]: 'Error', [LABEL_COMPLETED]: 'true' },
    });
    this.deps.log.warn('workflow ended in Error: its stored nodes cannot be read', {
      workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
      error: message,
    });
    return {};
  }

  /** Whether a young workflow must wait for the template caches, which lack a template the API server has (template-lag.ts). */
  private async templatesLag(wf: Obj<Workflow>): Promise<boolean> {
    if (!mayWaitForTemplates(wf.metadata.creationTimestamp, Date.now())) return false;
    const ns = wf.metadata.namespace!;
    const cluster = (ref: SourceRef) => ref.kind === 'ClusterWorkflowTemplate';
    const behind = await templatesBehind(wf, cachedTemplates(this.templateCaches, ns), async (ref) => {
      try {
        const type = cluster(ref) ? CLUSTER_WORKFLOW_TEMPLATES : WORKFLOW_TEMPLATES;
        return (await this.deps.client.get<WorkflowTemplate>(type, cluster(ref) ? undefined : ns, ref.name)).spec ?? {};
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
    if (behind.length > 0)
      this.deps.log.debug('waiting for the informer to show the templates the workflow refers to', {
        workflow: `${ns}/${wf.metadata.name}`,
        templates: behind.join(', '),
      });
    return behind.length > 0;
  }

  /**
   * `computed` if the workflow with its status fits under the size limit; otherwise (or when the
   * API server refused a write as too large) an Error status that fits, and no actions.
   */
  private bounded(
    wf: Obj<Workflow>,
    computed: ReconcileRun,
    refused: { attempt: number; message: string } | undefined,
    /** What is written in place of `computed.status` (an offloaded summary), when it differs. */
    written?: WorkflowStatus,
  ): ReconcileRun {
    const limit = this.deps.maxStatusBytes ?? DEFAULT_MAX_STATUS_BYTES;
    const b = boundedStatus(wf, computed.status, { limit, compressAbove: this.deps.compressNodesAbove, refused, written });
    if (b.over)
      this.deps.log.warn('the workflow status is over the size limit; ending the workflow in Error', {
        workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
        ...b.over,
      });
    return b.status === computed.status ? computed : { ...computed, status: b.status, actions: [] };
  }

  /**
   * What goes on the workflow's metadata with this status: the labels that mirror its phase (so
   * `list` can select by phase on the server) and the finalizers features need from the first
   * status on. status-writer.ts writes only what differs, in the status's own request.
   */
  private statusMetadata(wf: Obj<Workflow>, run: ReconcileRun, status: WorkflowStatus): StatusMetadata {
    const labels: Record<string, string> = {};
    const phase = status.phase ?? '';
    if (phase) labels[LABEL_PHASE] = phase;
    if (FINAL_WORKFLOW_PHASES.includes(phase)) labels[LABEL_COMPLETED] = 'true';
    const finalizers: string[] = [];
    for (const f of this.features) finalizers.push(...(f.finalizers?.(wf, run) ?? []));
    return { labels, finalizers };
  }

  /** One engine run on `wf` with what the caches show now; `previous` is the run before it in this reconcile. */
  private run(wf: Obj<Workflow>, previous?: ReconcileRun): ReconcileRun {
    const ns = wf.metadata.namespace!;
    const uid = wf.metadata.uid!;
    const observations = buildObservations({
      workflow: wf,
      pods: this.deps.caches.podsOf(ns, wf.metadata.name!),
      taskSet: this.deps.caches.taskSetOf(ns, wf.metadata.name!),
      podCreateFailures: this.deps.failures.podFailures(uid),
      agentFailure: this.deps.failures.agentFailure(uid),
      ...(this.deps.lostNodes ? { lostNode: (node: string | undefined) => this.deps.lostNodes!.reasonFor(node) } : {}),
      ...this.templateCaches,
      now: new Date(),
      pluginsEnabled: this.deps.pluginsEnabled,
      workflowLevelPluginsEnabled: this.deps.workflowLevelPluginsEnabled === true,
      ...(this.deps.artifactDrivers ? { artifactDrivers: this.deps.artifactDrivers } : {}),
      ...(this.deps.maxLoopItems !== undefined ? { maxLoopItems: this.deps.maxLoopItems } : {}),
    });
    for (const f of this.features) f.observe?.(wf, observations, previous);
    let out: ReconcileResult;
    try {
      out = this.deps.engine(wf, observations);
    } catch (err) {
      this.deps.log.error('the workflow engine failed on this workflow; ending it in Error', {
        workflow: `${ns}/${wf.metadata.name}`,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
      out = { status: engineFailureStatus(wf.status, err, observations.now), actions: [] };
    }
    // The engine keeps finished results itself (engine/node-lifecycle.ts); what it had to put back
    // is an engine bug, reported here and counted.
    if (out.restored?.length) {
      this.deps.metrics.lifecycleRepairs.inc(out.restored.length);
      this.deps.log.error('engine bug: a run would have changed finished results; the lifecycle rule kept them', {
        workflow: `${ns}/${wf.metadata.name}`,
        nodes: out.restored,
      });
    }
    return {
      status: out.status,
      actions: out.actions,
      effective: out.spec ? { ...wf, spec: out.spec } : wf,
      observations,
      ...(out.locks ? { locks: out.locks } : {}),
      ...(out.nodeDelta ? { nodeDelta: out.nodeDelta } : {}),
    };
  }
}
