/**
 * The controller's view of the cluster: one resilient informer per resource it reads, with the
 * indexes the reconciler needs, plus a small overlay of the objects this controller itself just
 * wrote — a write's reply is newer than the cache until the watch delivers it, and reconciling
 * from the older copy would only earn a 409 and a wasted write.
 *
 * Pods are cached slimmed down to metadata and status (the engine never reads a pod's spec),
 * which keeps memory flat with thousands of pods.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  inflateWorkflow,
  LABEL_CRON_WORKFLOW,
  type CronWorkflow,
  LABEL_WORKFLOW,
  type ClusterWorkflowTemplate,
  type Workflow,
  type WorkflowTaskSet,
  type WorkflowStatus,
  type WorkflowTemplate,
} from '../api/index.js';
import { canonicalNames } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { Informer, dropManagedFields, readinessProblem, staleAfterMs, type InformerLike } from '../kube/informer.js';
import { objectKey, type KubeObject } from '../kube/object-store.js';
import {
  CLUSTER_WORKFLOW_TEMPLATES,
  CRON_WORKFLOWS,
  NAMESPACES,
  PODS,
  WORKFLOWS,
  WORKFLOW_TASK_SETS,
  WORKFLOW_TEMPLATES,
} from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { BucketedPods } from './bucketed-pods.js';
import { MemoCaches } from './memo-caches.js';
import { ParameterConfigMaps } from './parameter-config-maps.js';
import type { PluginDiscovery } from './plugin-discovery.js';

export type CachedPod = V1Pod & KubeObject;
type Obj<T> = T & KubeObject;

export interface CacheOptions {
  client: KubeClient;
  /** Only this namespace (tests, single-namespace installs); all namespaces when undefined. */
  namespace?: string;
  resyncMs?: number;
  watchdogMs?: number;
  /** /readyz fails when an informer has not heard from the server for this long. */
  staleMs?: number;
  /**
   * Watch only the pods of the shard buckets given later (sharding.ts, `pods.watch`), none until
   * then; every workflow pod otherwise.
   */
  shardedPods?: boolean;
  log: Logger;
}

/** Index of pods and TaskSets by `namespace/workflow`. */
export const BY_WORKFLOW = 'workflow';
/** Index of workflows by the CronWorkflow that started them (`ns/cron`). */
export const BY_CRON = 'cron';

export class ControllerCaches {
  readonly workflows: Informer<Obj<Workflow>>;
  /** Every workflow pod, or with `shardedPods` those of the buckets this replica owns (`pods.watch`). */
  readonly pods: BucketedPods<CachedPod>;
  readonly taskSets: Informer<Obj<WorkflowTaskSet>>;
  readonly workflowTemplates: Informer<Obj<WorkflowTemplate>>;
  readonly clusterWorkflowTemplates: Informer<Obj<ClusterWorkflowTemplate>>;
  /** Namespaces (name and labels only): their pod security labels choose the pod policy level. */
  readonly namespaces: Informer<KubeObject>;
  /** CronWorkflows (cron-reconciler.ts); their runs are found through the workflows' BY_CRON index. */
  readonly cronWorkflows: Informer<Obj<CronWorkflow>>;
  /** The memoize caches (ConfigMaps with the cache label), read by reconciles and written by saveMemo. */
  readonly memo: MemoCaches;
  /** The ConfigMaps configMapKeyRef parameters may read (labelled configmap-type=Parameter). */
  readonly parameterConfigMaps: ParameterConfigMaps;
  private readonly written = new Overlay<Obj<Workflow>>();
  private readonly writtenTaskSets = new Overlay<Obj<WorkflowTaskSet>>();
  /** Workflow key → the status this controller last wrote (or is writing) for it. */
  private readonly ownStatus = new Map<string, WorkflowStatus>();
  private readonly staleMs: number;

  constructor(
    o: CacheOptions,
    readonly plugins?: PluginDiscovery,
  ) {
    const common = { client: o.client, namespace: o.namespace, log: o.log, resyncMs: o.resyncMs, watchdogMs: o.watchdogMs };
    this.staleMs = o.staleMs ?? staleAfterMs(o.watchdogMs);
    this.workflows = new Informer<Obj<Workflow>>({ ...common, type: WORKFLOWS, transform: inflateCached });
    this.pods = new BucketedPods<CachedPod>(
      (labelSelector) => new Informer<CachedPod>({ ...common, type: PODS, labelSelector, transform: slimPod, resyncMs: 0 }),
      o.shardedPods ? [] : 'all',
    );
    this.pods.addIndex(BY_WORKFLOW, (p) => workflowIndex(p));
    this.taskSets = new Informer<Obj<WorkflowTaskSet>>({ ...common, type: WORKFLOW_TASK_SETS, transform: dropManagedFields, resyncMs: 0 });
    this.workflowTemplates = new Informer<Obj<WorkflowTemplate>>({
      ...common,
      type: WORKFLOW_TEMPLATES,
      transform: canonicalTemplate,
      resyncMs: 0,
    });
    this.clusterWorkflowTemplates = new Informer<Obj<ClusterWorkflowTemplate>>({
      ...common,
      namespace: undefined,
      type: CLUSTER_WORKFLOW_TEMPLATES,
      transform: canonicalTemplate,
      resyncMs: 0,
    });
    this.namespaces = new Informer<KubeObject>({
      ...common,
      namespace: undefined,
      ...(o.namespace ? { fieldSelector: `metadata.name=${o.namespace}` } : {}),
      type: NAMESPACES,
      transform: slimNamespace,
      resyncMs: 0,
    });
    this.cronWorkflows = new Informer<Obj<CronWorkflow>>({ ...common, type: CRON_WORKFLOWS, transform: canonicalCron, resyncMs: 0 });
    this.workflows.addIndex(BY_CRON, (wf) => {
      const cron = wf.metadata?.labels?.[LABEL_CRON_WORKFLOW];
      return cron ? [`${wf.metadata.namespace}/${cron}`] : [];
    });
    this.memo = new MemoCaches({ client: o.client, namespace: o.namespace, log: o.log, watchdogMs: o.watchdogMs });
    this.parameterConfigMaps = new ParameterConfigMaps({ client: o.client, namespace: o.namespace, log: o.log, watchdogMs: o.watchdogMs });
    this.written.follow(this.workflows);
    this.writtenTaskSets.follow(this.taskSets);
  }

  /** Every informer with a name, for readiness and metrics. */
  informers(): { name: string; informer: InformerLike }[] {
    const list: { name: string; informer: InformerLike }[] = [
      { name: 'workflows', informer: this.workflows },
      { name: 'pods', informer: this.pods },
      { name: 'workflowtasksets', informer: this.taskSets },
      { name: 'workflowtemplates', informer: this.workflowTemplates },
      { name: 'clusterworkflowtemplates', informer: this.clusterWorkflowTemplates },
      { name: 'namespaces', informer: this.namespaces },
      { name: 'memoize-caches', informer: this.memo.informer },
      { name: 'parameter-configmaps', informer: this.parameterConfigMaps.informer },
      { name: 'cronworkflows', informer: this.cronWorkflows },
    ];
    if (this.plugins) list.push({ name: 'plugin-configmaps', informer: this.plugins.informer });
    return list;
  }

  start(): void {
    for (const { informer } of this.informers()) informer.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.informers().map(({ informer }) => informer.waitForSync()));
  }

  hasSynced(): boolean {
    return this.informers().every(({ informer }) => informer.hasSynced());
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers().map(({ informer }) => informer.stop()));
  }

  /** Why the caches cannot be trusted right now (empty when they can). */
  readinessProblems(): string[] {
    const out: string[] = [];
    for (const { name, informer } of this.informers()) {
      const problem = readinessProblem(name, informer, this.staleMs);
      if (problem) out.push(problem);
    }
    return out;
  }

  /** The workflows the CronWorkflow `namespace/name` started. */
  workflowsOfCron(namespace: string, name: string): Obj<Workflow>[] {
    return this.workflows.byIndex(BY_CRON, `${namespace}/${name}`);
  }

  /** The newest copy of a workflow: the cache, or this controller's last write if newer. */
  workflow(namespace: string, name: string): Obj<Workflow> | undefined {
    const cached = this.workflows.get(namespace, name);
    if (!cached) return undefined; // deleted (or not seen yet): nothing to do
    return this.written.newest(cached);
  }

  /** Remembers a workflow newer than the cache: the reply of a write, or a fresh read after a conflict. */
  rememberWorkflow(wf: Obj<Workflow>): void {
    // Shaped as the informer shapes what it caches (nodes inflated, the spec's names canonical):
    // a write's reply (a label patch) is the raw stored object.
    this.written.remember(inflateCached(wf));
  }

  /**
   * Records the status about to be written, BEFORE the write: the watch event of the write can
   * arrive before its reply, so the echo must be recognisable by content, not resourceVersion.
   */
  expectStatus(namespace: string, name: string, status: WorkflowStatus): void {
    this.ownStatus.set(`${namespace}/${name}`, status);
  }

  /** The status this controller last wrote (or is writing) for a workflow. */
  ownStatusOf(wf: Obj<Workflow>): WorkflowStatus | undefined {
    return this.ownStatus.get(objectKey(wf));
  }

  /** Remembers the TaskSet a write returned. */
  rememberTaskSet(ts: Obj<WorkflowTaskSet>): void {
    this.writtenTaskSets.remember(ts);
  }

  podsOf(namespace: string, workflow: string): CachedPod[] {
    return this.pods.byIndex(BY_WORKFLOW, `${namespace}/${workflow}`);
  }

  /** The workflow's TaskSet: the cache, or this controller's last write if newer. */
  taskSetOf(namespace: string, workflow: string): Obj<WorkflowTaskSet> | undefined {
    const cached = this.taskSets.get(namespace, workflow);
    const mine = this.writtenTaskSets.get(`${namespace}/${workflow}`);
    if (!cached) return mine;
    return this.writtenTaskSets.newest(cached);
  }

  /** Drops what is remembered about a workflow that is gone. */
  forget(namespace: string, name: string): void {
    this.written.delete(`${namespace}/${name}`);
    this.writtenTaskSets.delete(`${namespace}/${name}`);
    this.ownStatus.delete(`${namespace}/${name}`);
  }

  workflowPhases(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const wf of this.workflows.list()) {
      const phase = wf.status?.phase ?? '';
      out[phase] = (out[phase] ?? 0) + 1;
    }
    return out;
  }
}

/** Objects this controller wrote, kept until the informer has caught up with them. */
class Overlay<T extends KubeObject> {
  private readonly items = new Map<string, T>();

  follow(informer: Informer<T>): void {
    const catchUp = (obj: T): void => {
      const key = objectKey(obj);
      const mine = this.items.get(key);
      if (mine && !isNewer(mine, obj)) this.items.delete(key);
    };
    informer.addHandlers({ onAdd: catchUp, onUpdate: (_o, obj) => catchUp(obj), onDelete: (obj) => this.items.delete(objectKey(obj)) });
  }

  remember(obj: T): void {
    this.items.set(objectKey(obj), dropManagedFields(obj));
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  delete(key: string): void {
    this.items.delete(key);
  }

  /** `cached`, or the remembered copy when that is newer. */
  newest(cached: T): T {
    const mine = this.items.get(objectKey(cached));
    return mine && isNewer(mine, cached) ? mine : cached;
  }
}

function workflowIndex(o: KubeObject): string[] {
  const wf = o.metadata?.labels?.[LABEL_WORKFLOW];
  return wf && o.metadata?.namespace ? [`${o.metadata.namespace}/${wf}`] : [];
}

/**
 * Whether `a` is a later version than `b`. resourceVersions are opaque to clients in general;
 * on etcd-backed API servers they are increasing integers, which is what this relies on (and
 * only to choose between two copies of the same object).
 */
export function isNewer(a: KubeObject, b: KubeObject): boolean {
  const ra = a.metadata?.resourceVersion ?? '';
  const rb = b.metadata?.resourceVersion ?? '';
  if (ra === rb) return false;
  if (/^\d+$/.test(ra) && /^\d+$/.test(rb)) return BigInt(ra) > BigInt(rb);
  return false;
}

/** Namespaces as the pod policy needs them: name and labels. */
function slimNamespace(n: KubeObject): KubeObject {
  const m = n.metadata ?? {};
  return {
    apiVersion: n.apiVersion,
    kind: n.kind,
    metadata: { name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, labels: m.labels },
  };
}

/** Pods as the controller needs them: metadata (no managedFields) and status. */
/**
 * A workflow as the controller keeps it: nodes inflated from `status.compressedNodes`, the stored
 * string kept beside them (compressed-nodes.ts). One that cannot be inflated stays as stored; the
 * reconciler ends it in Error instead of running it without its nodes.
 */
/**
 * Cached objects hold the spec's field names only: the peer's (`s3`, `prometheus`, …) are renamed
 * as they enter (src/api/peer-names.ts), so the engine reads one name. Only the spec is renamed:
 * the controller writes nothing back to it.
 */
function inflateCached(wf: Obj<Workflow>): Obj<Workflow> {
  dropManagedFields(wf);
  if (wf.spec) wf.spec = canonicalNames(wf.spec, 'WorkflowSpec');
  try {
    return inflateWorkflow(wf, true);
  } catch {
    return wf;
  }
}

function canonicalTemplate<T extends Obj<WorkflowTemplate> | Obj<ClusterWorkflowTemplate>>(t: T): T {
  dropManagedFields(t);
  if (t.spec) t.spec = canonicalNames(t.spec, 'WorkflowSpec');
  return t;
}

function canonicalCron(c: Obj<CronWorkflow>): Obj<CronWorkflow> {
  dropManagedFields(c);
  if (c.spec?.workflowSpec) c.spec = { ...c.spec, workflowSpec: canonicalNames(c.spec.workflowSpec, 'WorkflowSpec') };
  return c;
}

function slimPod(p: CachedPod): CachedPod {
  dropManagedFields(p);
  // spec.nodeName only: the node a step ran on (retryStrategy.affinity.nodeAntiAffinity avoids it).
  return {
    apiVersion: p.apiVersion,
    kind: p.kind,
    metadata: p.metadata,
    status: p.status,
    ...(p.spec?.nodeName ? { spec: { nodeName: p.spec.nodeName } } : {}),
  } as CachedPod;
}
