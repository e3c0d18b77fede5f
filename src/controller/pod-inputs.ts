/**
 * What a step pod needs from the world before it can be built: its artifact plan (which reads the
 * workflow's artifact repository from its ConfigMap) and the ENTRYPOINT and CMD of the images it
 * runs without a command (which asks their registries). These are looked up after the engine has
 * asked for the pod and before its status is written (the pod-inputs feature's `rerun` hook), so:
 *
 *   - a lookup that fails is recorded as the pod's create failure, the engine runs again and
 *     fails the node with the reason in the same reconcile (the decision stays the engine's);
 *   - the applier only builds and creates pods from what was prepared here, with no I/O but the
 *     create itself. A pod the engine asked for in a later run of the same reconcile (after a
 *     lock was granted) is prepared in the next reconcile, which the applier asks for at once.
 *
 * What was prepared is kept per workflow until its pod is created, and dropped when the workflow
 * is forgotten.
 */
import type { Workflow } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import { ArtifactPlanError, type ArtifactPlan } from '../artifacts/plan.js';
import { RepositoryError } from '../artifacts/repository.js';
import type { KubeObject } from '../kube/object-store.js';
import { errorMessage } from '../log/error-message.js';
import type { Logger } from '../log/logger.js';
import type { ImageCommands } from '../pods/image-commands.js';
import type { ControllerCaches } from './caches.js';
import type { Expectations, FailureMemory } from './failure-memory.js';
import { ImageLookupError, type ImageEntrypoints } from './image-entrypoints.js';
import { inParallel } from './in-parallel.js';
import { podArtifactPlan, type PodArtifactSettings } from './pod-artifact-plan.js';

type Obj<T> = T & KubeObject;
type CreatePod = Extract<EngineAction, { kind: 'createPod' }>;

/** What the applier builds a step pod with. */
export interface PreparedPod {
  artifacts?: ArtifactPlan;
  imageCommands?: ImageCommands;
}

export interface PodInputOptions extends PodArtifactSettings {
  caches: Pick<ControllerCaches, 'pods'>;
  failures: FailureMemory;
  creations: Expectations;
  /** Entrypoints of images run without a command (image-entrypoints.ts); without it such containers fail. */
  images?: ImageEntrypoints;
  /** Where a failed lookup is told (as the applier tells a pod it cannot create). */
  log?: Logger;
}

export class PodInputs {
  /** By workflow key (`ns/name`): its uid (a recreated workflow starts afresh) and pods by name. */
  private readonly byWorkflow = new Map<string, { uid: string; pods: Map<string, PreparedPod> }>();

  constructor(private readonly opts: PodInputOptions) {}

  /**
   * Looks up what the pods `actions` create need, for those not prepared, existing or failed yet.
   * True when a lookup failed: its failure is recorded and the engine must run again to see it.
   */
  async prepare(wf: Obj<Workflow>, actions: readonly EngineAction[]): Promise<boolean> {
    const ns = wf.metadata.namespace!;
    const uid = wf.metadata.uid!;
    const pods = this.podsOf(wf, true)!;
    const todo = actions.filter((a): a is CreatePod => a.kind === 'createPod' && !pods.has(a.podName) && !this.settled(wf, a.podName));
    const outcomes = await inParallel(todo, async (a) => {
      const failure = await this.prepareOne(wf, a, pods);
      if (failure === undefined) return false;
      this.opts.log?.warn('pod cannot be created; its node fails', {
        workflow: `${ns}/${wf.metadata.name}`,
        pod: a.podName,
        reason: failure,
      });
      this.opts.failures.addPodFailure(uid, a.podName, { nodeId: a.nodeId, message: failure });
      return true;
    });
    return outcomes.some(Boolean);
  }

  /**
   * The pod needs nothing more: it exists, its creation is under way, or it failed for good. The
   * one definition the preparation and the applier's create both go by.
   */
  settled(wf: Obj<Workflow>, podName: string): boolean {
    const ns = wf.metadata.namespace!;
    return (
      this.opts.caches.pods.get(ns, podName) !== undefined ||
      this.opts.creations.pending(`${ns}/${podName}`) ||
      this.opts.failures.podFailures(wf.metadata.uid!)?.has(podName) === true
    );
  }

  /** What was prepared for the pod; undefined when it was not (prepare it in the next reconcile). */
  of(wf: Obj<Workflow>, podName: string): PreparedPod | undefined {
    return this.podsOf(wf, false)?.get(podName);
  }

  /** The pod was created (or already existed): what it was built with is no longer needed. */
  created(wf: Obj<Workflow>, podName: string): void {
    this.podsOf(wf, false)?.delete(podName);
  }

  /** The workflow is gone. */
  forget(key: string): void {
    this.byWorkflow.delete(key);
  }

  /** The message the node fails with, or undefined when the pod is prepared. */
  private async prepareOne(wf: Obj<Workflow>, a: CreatePod, pods: Map<string, PreparedPod>): Promise<string | undefined> {
    const prepared: PreparedPod = {};
    try {
      const artifacts = await podArtifactPlan(wf, a, this.opts);
      if (artifacts) prepared.artifacts = artifacts;
    } catch (err) {
      if (!(err instanceof RepositoryError || err instanceof ArtifactPlanError)) throw err;
      return `artifacts: ${errorMessage(err)}`;
    }
    try {
      const account = a.template.serviceAccountName || wf.spec.serviceAccountName || 'default';
      const imageCommands = await this.opts.images?.forTemplate(wf, a.template, account);
      if (imageCommands) prepared.imageCommands = imageCommands;
    } catch (err) {
      if (!(err instanceof ImageLookupError)) throw err;
      return `cannot build the pod: ${err.message}`;
    }
    pods.set(a.podName, prepared);
    return undefined;
  }

  private podsOf(wf: Obj<Workflow>, create: boolean): Map<string, PreparedPod> | undefined {
    const key = `${wf.metadata.namespace}/${wf.metadata.name}`;
    const uid = wf.metadata.uid!;
    let entry = this.byWorkflow.get(key);
    if (entry && entry.uid !== uid) {
      this.byWorkflow.delete(key);
      entry = undefined;
    }
    if (!entry && create) {
      entry = { uid, pods: new Map() };
      this.byWorkflow.set(key, entry);
    }
    return entry?.pods;
  }
}
