/**
 * The shell of artifact garbage collection (decisions: src/engine/artifact-gc.ts). A workflow
 * whose artifacts may be collected carries the finalizer ARTIFACT_GC_FINALIZER from its first
 * reconcile; once a strategy is due (the workflow finished, or is being deleted) a pod deletes its
 * artifacts (the controller reads no Secret), and its success is recorded in
 * `status.artifactGCStatus`. The finalizer is removed when a deleted workflow's strategies are
 * all processed, so the workflow is not gone before its artifacts are.
 *
 * A GC pod that fails leaves the condition `ArtifactGCError` (with what it said) and an Event on
 * the workflow, and the finalizer in place: nothing is lost silently. Deleting the failed pod
 * (after fixing the credentials, say) makes the next look (every 10 s) try again; removing the finalizer
 * by hand gives up on the artifacts.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Workflow, WorkflowCondition } from '../api/index.js';
import { ARTIFACT_GC_FINALIZER, artifactsToCollect, dueStrategies, type GCStrategy, type WorkflowStatusWithGC } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/object-store.js';
import { PODS, WORKFLOWS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { artifactGCPodName, buildArtifactGCPod } from '../pods/artifact-gc-pod.js';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import type { EventRecorder } from '../kube/event-recorder.js';

type Obj<T> = T & KubeObject;

export const CONDITION_ARTIFACT_GC_ERROR = 'ArtifactGCError';
/** How often a running GC pod is looked at (it is not in the controller's pod cache). */
const POLL_MS = 1_000;
/** How often a failed GC pod is looked at: deleting it (after a fix) starts a new try. */
const FAILED_POLL_MS = 10_000;

export interface ArtifactGCDeps {
  client: KubeClient;
  log: Logger;
  events?: EventRecorder;
  executorImage: string;
  /** A GCS-compatible server for vendorCObject artifacts (PLUGFLOW_GCS_ENDPOINT). */
  gcsEndpoint?: string;
  /** The artifact driver plugins (PLUGFLOW_ARTIFACT_DRIVERS): a plugin artifact is deleted by its driver. */
  artifactDrivers?: readonly ArtifactDriver[];
}

export class ArtifactGC {
  constructor(private readonly deps: ArtifactGCDeps) {}

  /**
   * Runs what is due for a finished or deleting workflow (`effectiveSpec`: its spec with
   * spec.workflowTemplateRef resolved); returns when to look again while a GC
   * pod runs or after it failed (undefined: nothing more to do).
   */
  async collect(wf: Obj<Workflow>, effectiveSpec: Workflow['spec'], finished: boolean): Promise<number | undefined> {
    if (!wf.metadata.finalizers?.includes(ARTIFACT_GC_FINALIZER)) return undefined;
    const deleting = !!wf.metadata.deletionTimestamp;
    // The effective spec: a workflowTemplateRef's template may be what sets spec.artifactGC.
    const effective = { ...wf, spec: effectiveSpec };
    for (const strategy of dueStrategies(wf, finished, deleting)) {
      const artifacts = artifactsToCollect(effective, strategy);
      if (artifacts.length > 0) {
        const state = await this.runPod(effective, strategy, artifacts);
        if (state === 'running') return Date.now() + POLL_MS;
        if (state === 'failed') return Date.now() + FAILED_POLL_MS;
      }
      await this.markProcessed(wf, strategy, artifacts.length);
    }
    if (deleting) await this.removeFinalizer(wf);
    return undefined;
  }

  private async runPod(
    wf: Obj<Workflow>,
    strategy: GCStrategy,
    artifacts: ReturnType<typeof artifactsToCollect>,
  ): Promise<'running' | 'done' | 'failed'> {
    const ns = wf.metadata.namespace!;
    const name = artifactGCPodName(wf.metadata.name!, strategy);
    let pod: V1Pod | undefined;
    try {
      pod = await this.deps.client.get<V1Pod>(PODS, ns, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!pod || pod.metadata?.uid === undefined) {
      try {
        await this.deps.client.create(
          PODS,
          ns,
          buildArtifactGCPod(wf, strategy, artifacts, this.deps.executorImage, this.deps.gcsEndpoint, this.deps.artifactDrivers),
        );
        this.deps.log.info('artifact GC pod created', {
          workflow: `${ns}/${wf.metadata.name}`,
          pod: name,
          strategy,
          artifacts: artifacts.length,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) {
          await this.failed(wf, strategy, `the artifact GC pod ${name} could not be created: ${errorMessage(err)}`);
          return 'failed';
        }
      }
      return 'running';
    }
    const phase = pod.status?.phase;
    if (phase === 'Succeeded') return 'done';
    if (phase === 'Failed') {
      const t = pod.status?.containerStatuses?.find((c) => c.name === 'gc')?.state?.terminated;
      await this.failed(
        wf,
        strategy,
        `the artifact GC pod ${name} failed: ${t?.message?.trim() || t?.reason || pod.status?.message || 'no message'}`,
      );
      return 'failed';
    }
    return 'running';
  }

  private async markProcessed(wf: Obj<Workflow>, strategy: GCStrategy, count: number): Promise<void> {
    const status = wf.status as WorkflowStatusWithGC | undefined;
    const conditions = (status?.conditions ?? []).filter((c) => c.type !== CONDITION_ARTIFACT_GC_ERROR);
    const patch = {
      status: {
        artifactGCStatus: { strategiesProcessed: { ...status?.artifactGCStatus?.strategiesProcessed, [strategy]: true } },
        ...(conditions.length !== (status?.conditions ?? []).length ? { conditions } : {}),
      },
    };
    const written = await this.deps.client.mergePatch<Obj<Workflow>>(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, patch);
    wf.status = written.status;
    wf.metadata.resourceVersion = written.metadata.resourceVersion;
    this.deps.log.info('artifacts collected', { workflow: `${wf.metadata.namespace}/${wf.metadata.name}`, strategy, artifacts: count });
  }

  private async failed(wf: Obj<Workflow>, strategy: GCStrategy, message: string): Promise<void> {
    const existing = wf.status?.conditions ?? [];
    if (existing.some((c) => c.type === CONDITION_ARTIFACT_GC_ERROR && c.message === message)) return;
    const condition: WorkflowCondition = { type: CONDITION_ARTIFACT_GC_ERROR, status: 'True', message };
    const conditions = [...existing.filter((c) => c.type !== CONDITION_ARTIFACT_GC_ERROR), condition];
    await this.deps.client.mergePatch(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, { status: { conditions } });
    this.deps.log.warn('artifact GC failed; the finalizer stays until it succeeds (delete the GC pod to retry)', {
      workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
      strategy,
      reason: message,
    });
    this.deps.events?.record(wf, 'Warning', 'ArtifactGCFailed', message);
  }

  private async removeFinalizer(wf: Obj<Workflow>): Promise<void> {
    const finalizers = (wf.metadata.finalizers ?? []).filter((f) => f !== ARTIFACT_GC_FINALIZER);
    try {
      await this.deps.client.mergePatch(WORKFLOWS, wf.metadata.namespace, wf.metadata.name!, {
        metadata: { resourceVersion: wf.metadata.resourceVersion, finalizers: finalizers.length ? finalizers : null },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
