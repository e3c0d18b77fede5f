/**
 * Runs the workflows' resource templates (src/resources) for the engine: one job per resource
 * node, started on the first `runResource` action for it and reported through `observe` until
 * the engine has recorded its end.
 *
 * Each job acts through a view of the controller's client that impersonates the step's service
 * account (`Impersonate-User: system:serviceaccount:<ns>:<name>`; the API server adds the
 * account's groups), so the API server's RBAC decides with that account's rights, never the
 * controller's: a workflow whose account may not create Jobs cannot create one here.
 *
 * Jobs live in memory. The engine stores the object a job acted on in the node's status once it
 * is reported, and asks for it again with `resume` after a restart, so a restarted controller
 * waits for the object's conditions instead of acting twice. A job whose node is no longer asked
 * for (it ended, hit its deadline, the workflow stopped or was deleted) is aborted and dropped.
 */
import type { Template, Workflow } from '../api/index.js';
import { GROUP, VERSION } from '../api/index.js';
import type { EngineAction, ResourceObservation } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/object-store.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { runResourceTemplate } from '../resources/resource-action.js';
import { ManifestReadError, manifestText, withManifest } from './fetched-manifest.js';

type RunResource = Extract<EngineAction, { kind: 'runResource' }>;

interface Job {
  observation: ResourceObservation;
  abort: AbortController;
}

export interface ResourceRunnerOptions {
  client: KubeClient;
  log: Logger;
  /** Reconcile the workflow `ns/name` again (a job moved on). */
  enqueue(key: string): void;
  /** Poll interval bounds while waiting for conditions (tests shorten them). */
  pollMs?: { first: number; max: number };
}

export class ResourceRunner {
  /** Jobs by workflow key, for the workflow uid they were started for. */
  private readonly jobs = new Map<string, { uid: string; nodes: Map<string, Job> }>();
  private readonly discovery: Discovery;

  constructor(private readonly opts: ResourceRunnerOptions) {
    this.discovery = new Discovery(opts.client);
  }

  /** What the jobs of this workflow report now. */
  observe(wf: Workflow & KubeObject): ResourceObservation[] {
    const entry = this.jobs.get(keyOf(wf));
    if (!entry || entry.uid !== wf.metadata.uid) return [];
    return [...entry.nodes.values()].map((j) => j.observation);
  }

  /**
   * Starts the jobs asked for that are not running, and drops those no longer asked for (after
   * the status that recorded their end was stored: the applier runs after the status write).
   */
  apply(wf: Workflow & KubeObject, asked: readonly RunResource[]): void {
    const key = keyOf(wf);
    const uid = wf.metadata.uid!;
    let entry = this.jobs.get(key);
    if (entry && entry.uid !== uid) {
      this.forget(key);
      entry = undefined;
    }
    if (asked.length === 0) {
      if (entry) this.forget(key);
      return;
    }
    if (!entry) this.jobs.set(key, (entry = { uid, nodes: new Map() }));
    const wanted = new Set(asked.map((a) => a.nodeId));
    for (const [nodeId, job] of entry.nodes) {
      if (!wanted.has(nodeId)) {
        job.abort.abort();
        entry.nodes.delete(nodeId);
      }
    }
    for (const a of asked) if (!entry.nodes.has(a.nodeId)) this.start(wf, entry.nodes, a);
  }

  /** Aborts and drops every job of the workflow `ns/name` (deleted). */
  forget(key: string): void {
    const entry = this.jobs.get(key);
    if (!entry) return;
    for (const job of entry.nodes.values()) job.abort.abort();
    this.jobs.delete(key);
  }

  /** Aborts every job (the controller stops; a new leader resumes them from the statuses). */
  stop(): void {
    for (const key of [...this.jobs.keys()]) this.forget(key);
  }

  private start(wf: Workflow & KubeObject, nodes: Map<string, Job>, a: RunResource): void {
    const key = keyOf(wf);
    const ns = wf.metadata.namespace!;
    const job: Job = {
      observation: { nodeId: a.nodeId, phase: 'Running', ...(a.resume ? { object: a.resume } : {}) },
      abort: new AbortController(),
    };
    nodes.set(a.nodeId, job);
    const log = { workflow: key, node: a.nodeId, action: a.template.resource?.action, serviceAccount: `${ns}/${a.serviceAccountName}` };
    this.opts.log.info(a.resume ? 'resource step: waiting for its object again' : 'resource step started', log);
    const moved = (): void => {
      if (!job.abort.signal.aborted) this.opts.enqueue(key);
    };
    const template = async (): Promise<Template> => {
      if (!a.manifest) return a.template;
      try {
        return withManifest(a.template, await manifestText(this.opts.client, ns, a.manifest, job.abort.signal));
      } catch (err) {
        throw new ManifestReadError(`${a.where}.resource.manifestFrom: ${errorMessage(err)}`);
      }
    };
    template()
      .then((t) =>
        runResourceTemplate({
          client: this.opts.client.as({ kind: 'serviceAccount', namespace: ns, name: a.serviceAccountName }),
          discovery: this.discovery,
          workflow: {
            apiVersion: wf.apiVersion ?? `${GROUP}/${VERSION}`,
            kind: 'Workflow',
            name: wf.metadata.name!,
            namespace: ns,
            uid: wf.metadata.uid!,
          },
          template: t,
          where: a.where,
          ...(a.resume ? { resume: a.resume } : {}),
          signal: job.abort.signal,
          onActed: (object, message) => {
            job.observation = { nodeId: a.nodeId, phase: 'Running', message, object };
            moved();
          },
          ...(this.opts.pollMs ? { pollMs: this.opts.pollMs } : {}),
        }),
      )
      .then((result) => {
        if (job.abort.signal.aborted) return;
        job.observation = {
          nodeId: a.nodeId,
          phase: result.phase,
          message: result.message,
          ...(result.phase === 'Succeeded' ? { outputs: result.outputs } : {}),
          ...(result.ref ? { object: result.ref } : {}),
        };
        this.opts.log.info('resource step ended', {
          ...log,
          phase: result.phase,
          ...(result.phase !== 'Succeeded' ? { message: result.message } : {}),
        });
        moved();
      })
      .catch((err: unknown) => {
        if (job.abort.signal.aborted) return;
        // The step's failure (a manifest that cannot be read back, an error of the runner), retried by its retryStrategy.
        job.observation = { nodeId: a.nodeId, phase: 'Error', message: errorMessage(err) };
        this.opts.log.warn('resource step ended', { ...log, phase: 'Error', message: job.observation.message });
        moved();
      });
  }
}

function keyOf(wf: Workflow & KubeObject): string {
  return `${wf.metadata.namespace}/${wf.metadata.name}`;
}
