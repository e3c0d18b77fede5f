/**
 * Applies the engine's actions to the cluster, idempotently and with as few writes as possible:
 *
 * - createPod and ensureAgent: the built pod is checked first (pod-admission.ts: the namespace's
 *   pod security level, the service account rules); a refusal fails the step like a build error;
 * - createPod: skipped when the pod is cached or was just created (expectations); AlreadyExists
 *   counts as success (pod names are deterministic, so a restarted controller finds its pods
 *   instead of duplicating them); a permanent refusal is remembered as a Failed pod;
 * - deletePod: skipped when already gone or terminating; NotFound counts as success; the uid
 *   precondition makes sure a newer pod of the same name is never deleted by mistake;
 * - writeTask / removeTask / completeTaskSet: folded into ONE merge patch of the TaskSet (or one
 *   create, owned by the workflow, when it does not exist yet), containing only entries that
 *   differ from the cached TaskSet;
 * - ensureAgent: builds the agent pod with the workflow's plugins (src/plugins) and creates it;
 *   if it cannot be built or is refused, the reason is remembered and reported to the engine;
 * - replaceAgent: deletes the failed agent pod the engine decided to replace (the engine counts
 *   and bounds replacements in the workflow's status); ensureAgent then creates its successor;
 * - runResource: handed to the resource runner (resource-runner.ts), which starts the jobs not
 *   running and drops those no longer asked for — so it is called on every apply, even with none;
 * - requeueAt: returned to the caller, who schedules the key.
 * - createPVC / createPDB first, deletePVC / deletePDB / deleteWorkflow last, gcPod with the pod
 *   deletions: workflow-objects.ts.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { EXECUTOR_PLUGIN_SUFFIX, type Template, type Workflow } from '../api/index.js';
import type { EngineAction } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError, isAlreadyExists, isNotFound, isTransient } from '../kube/errors.js';
import type { KubeObject } from '../kube/object-store.js';
import { PODS, SERVICE_ACCOUNTS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import type { PluginEntry } from '../plugins/index.js';
import { agentPodName, buildAgentPod, pluginServiceAccount, type AgentPodOptions } from '../pods/agent-pod.js';
import { buildStepPod } from '../pods/build-pod.js';
import { checkStepServiceAccount, type PodSecurityLevel } from '../pods/pod-policy.js';
import type { ControllerCaches } from './caches.js';
import { deletionKey, type Expectations, type FailureMemory } from './failure-memory.js';
import { PodAdmission } from './pod-admission.js';
import { agentPluginsOf } from './agent-plugins.js';
import { writeTaskSet } from './task-set-writer.js';
import type { ResourceRunner } from './resource-runner.js';
import { createWorkflowObjects, deleteWorkflowObjects } from './workflow-objects.js';
import type { ArtifactDriver } from '../artifacts/drivers.js';
import type { PodInputs } from './pod-inputs.js';
import { inParallel } from './in-parallel.js';
import type { ControllerMetrics } from './metrics.js';
import { errorMessage } from '../log/error-message.js';

export interface ApplierOptions {
  client: KubeClient;
  caches: ControllerCaches;
  failures: FailureMemory;
  creations: Expectations;
  deletions: Expectations;
  metrics: ControllerMetrics;
  log: Logger;
  executorImage: string;
  /** Agent pod options; `serviceAccountName` is the namespace-local account agents run as by default. */
  agent: Omit<AgentPodOptions, 'pluginTokenSecrets'> & { serviceAccountName: string };
  /** The controller's pod security level (src/pods/pod-security-level.ts): the floor of every namespace. */
  podSecurityLevel: PodSecurityLevel;
  pluginsEnabled: boolean;
  /** Workflows may declare their own plugins (spec.executorPlugins, agent-plugins.ts). */
  workflowLevelPluginsEnabled?: boolean;
  /** The plugins a workflow in this namespace gets (empty when the gate is off). */
  pluginsFor(namespace: string): PluginEntry[];
  /** The artifact driver plugins the operator registered (PLUGFLOW_ARTIFACT_DRIVERS). */
  artifactDrivers?: readonly ArtifactDriver[];
  /** Runs resource templates with the step's service account's rights. */
  resources: ResourceRunner;
  /** What each step pod was prepared with (its artifact plan, its images' entrypoints). */
  podInputs: PodInputs;
}

export interface ApplyOutcome {
  /** Earliest requeueAt asked for, in ms since the epoch. */
  requeueAtMs?: number;
  /** Something was learnt that the engine must see at once (a permanent create failure). */
  requeueNow: boolean;
}

type Obj<T> = T & KubeObject;

/** Grace period of the agent pod's deletion once its workflow is complete (or the pod failed). */
export const AGENT_DELETE_GRACE_SECONDS = 2;

/** The bound lives in the engine, which decides; re-exported for the tests that count with it. */
export { MAX_AGENT_REPLACEMENTS } from '../engine/index.js';

export class ActionApplier {
  private readonly admission: PodAdmission;

  constructor(private readonly opts: ApplierOptions) {
    this.admission = new PodAdmission(opts.client, opts.caches, opts.podSecurityLevel);
  }

  async apply(wf: Obj<Workflow>, actions: readonly EngineAction[]): Promise<ApplyOutcome> {
    const out: ApplyOutcome = { requeueNow: false };
    const taskWrites: Record<string, Template | null> = {};
    let completeTaskSet = false;
    const creates: Extract<EngineAction, { kind: 'createPod' }>[] = [];
    const deletes: Extract<EngineAction, { kind: 'deletePod' }>[] = [];
    let ensureAgent = false;
    let replaceAgent: Extract<EngineAction, { kind: 'replaceAgent' }> | undefined;
    const memoSaves: Extract<EngineAction, { kind: 'saveMemo' }>[] = [];
    const resourceRuns: Extract<EngineAction, { kind: 'runResource' }>[] = [];
    for (const a of actions) {
      switch (a.kind) {
        case 'runResource':
          resourceRuns.push(a);
          break;
        case 'createPod':
          creates.push(a);
          break;
        case 'deletePod':
          deletes.push(a);
          break;
        case 'writeTask':
          taskWrites[a.nodeId] = a.template;
          break;
        case 'removeTask':
          taskWrites[a.nodeId] = null;
          break;
        case 'completeTaskSet':
          completeTaskSet = true;
          break;
        case 'ensureAgent':
          ensureAgent = true;
          break;
        case 'replaceAgent':
          replaceAgent = a;
          break;
        case 'saveMemo':
          memoSaves.push(a);
          break;
        case 'gcPod':
          deletes.push({ kind: 'deletePod', podName: a.podName, nodeId: a.nodeId, reason: a.reason });
          break;
        case 'requeueAt': {
          const at = Date.parse(a.at);
          if (!Number.isNaN(at) && (out.requeueAtMs === undefined || at < out.requeueAtMs)) out.requeueAtMs = at;
          break;
        }
      }
    }
    // Claims and budget before the pods that need them; an error stops here (workflow-objects.ts).
    await createWorkflowObjects(this.opts.client, wf, actions);
    // Pods of a fan-out are created in parallel (bounded): one round trip, not one per pod.
    if ((await inParallel(creates, (a) => this.createPod(wf, a))).some(Boolean)) out.requeueNow = true;
    this.opts.resources.apply(wf, resourceRuns);
    // Tasks first, so a new agent finds them at once (it watches, so this is speed, not safety).
    if (Object.keys(taskWrites).length > 0 || completeTaskSet) await writeTaskSet(this.opts, wf, taskWrites, completeTaskSet);
    if (replaceAgent) await this.replaceAgent(wf, replaceAgent);
    if (ensureAgent && (await this.ensureAgent(wf))) out.requeueNow = true;
    await inParallel(deletes, (a) => this.deletePod(wf, a.podName, a.reason));
    for (const a of memoSaves) await this.opts.caches.memo.save(wf, a);
    await deleteWorkflowObjects(this.opts.client, wf, actions, this.opts.log);
    return out;
  }

  /**
   * Deletes the workflow's agent pod (the workflow is complete; owner GC would too, later). With
   * a short grace period: every result is in, the agent itself has stopped on the TaskSet's
   * completed mark, and plugin servers that ignore SIGTERM would otherwise hold the pod (and
   * their ports) for the default 30 s.
   */
  async deleteAgent(wf: Obj<Workflow>): Promise<void> {
    const name = agentPodName(wf.metadata.name!);
    const pod = this.opts.caches.pods.get(wf.metadata.namespace, name);
    if (!pod || pod.metadata?.deletionTimestamp) return;
    await this.deletePod(wf, name, 'workflow completed', AGENT_DELETE_GRACE_SECONDS);
  }

  /** Returns true when a permanent failure was recorded. */
  private async createPod(wf: Obj<Workflow>, a: Extract<EngineAction, { kind: 'createPod' }>): Promise<boolean> {
    const ns = wf.metadata.namespace!;
    const key = `${ns}/${a.podName}`;
    if (this.opts.podInputs.settled(wf, a.podName)) return false;
    // Its lookups were made before the status was written (pod-inputs.ts); without them, the next
    // reconcile makes them.
    const prepared = this.opts.podInputs.of(wf, a.podName);
    if (!prepared) return true;
    let pod: V1Pod;
    try {
      pod = buildStepPod({
        workflow: wf,
        nodeId: a.nodeId,
        podName: a.podName,
        template: a.template,
        workflowPodSpecPatch: a.workflowPodSpecPatch,
        executorImage: this.opts.executorImage,
        ...prepared,
        ...(this.opts.artifactDrivers?.length ? { artifactDrivers: this.opts.artifactDrivers } : {}),
      });
    } catch (err) {
      return this.podFailed(wf, a.podName, a.nodeId, `cannot build the pod: ${errorMessage(err)}`);
    }
    const refusal = await this.admission.refusal(
      ns,
      `pod ${a.podName}`,
      pod,
      checkStepServiceAccount(pod.spec, this.opts.agent.serviceAccountName, EXECUTOR_PLUGIN_SUFFIX),
    );
    if (refusal) return this.podFailed(wf, a.podName, a.nodeId, refusal);
    try {
      await this.opts.client.create(PODS, ns, pod);
      this.opts.metrics.podsCreated.inc();
      this.opts.creations.expect(key);
      this.opts.podInputs.created(wf, a.podName);
      this.opts.log.debug('created pod', { workflow: `${ns}/${wf.metadata.name}`, pod: a.podName, node: a.nodeId });
    } catch (err) {
      if (isAlreadyExists(err)) {
        this.opts.creations.expect(key);
        this.opts.podInputs.created(wf, a.podName);
        return false;
      }
      if (isPermanent(err)) return this.podFailed(wf, a.podName, a.nodeId, `the pod was refused: ${errorMessage(err)}`);
      throw err;
    }
    return false;
  }

  private podFailed(wf: Obj<Workflow>, podName: string, nodeId: string, message: string): boolean {
    this.opts.log.warn('pod cannot be created; its node fails', {
      workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
      pod: podName,
      reason: message,
    });
    this.opts.failures.addPodFailure(wf.metadata.uid!, podName, { nodeId, message });
    return true;
  }

  private async deletePod(wf: Obj<Workflow>, podName: string, reason: string, gracePeriodSeconds?: number): Promise<void> {
    const ns = wf.metadata.namespace!;
    const pod = this.opts.caches.pods.get(ns, podName);
    if (!pod || pod.metadata?.deletionTimestamp) return;
    const key = deletionKey(pod);
    if (this.opts.deletions.pending(key)) return;
    // Expected before the call: a pod without a node is gone at once, and the watch can report
    // that before the reply to the delete arrives.
    this.opts.deletions.expect(key);
    try {
      await this.opts.client.delete(PODS, ns, podName, { uid: pod.metadata?.uid, gracePeriodSeconds });
      this.opts.log.debug('deleted pod', { workflow: `${ns}/${wf.metadata.name}`, pod: podName, reason });
    } catch (err) {
      // NotFound: gone already. Conflict: the uid precondition failed — a different pod now.
      if (isNotFound(err) || (err instanceof ApiError && err.code === 409)) return;
      this.opts.deletions.observed(key);
      throw err;
    }
  }

  /**
   * Deletes the failed agent pod the engine chose to replace (only that pod: a successor of the
   * same name is never touched); once it is gone, ensureAgent creates a new one, which runs the
   * tasks still waiting in the TaskSet.
   */
  private async replaceAgent(wf: Obj<Workflow>, a: Extract<EngineAction, { kind: 'replaceAgent' }>): Promise<void> {
    const pod = this.opts.caches.pods.get(wf.metadata.namespace!, a.podName);
    if (!pod || pod.metadata?.uid !== a.podUID || pod.metadata.deletionTimestamp || this.opts.deletions.pending(deletionKey(pod))) return;
    this.opts.log.warn('agent pod failed; replacing it (tasks it had taken end in Error, the others wait for the new pod)', {
      workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
      pod: a.podName,
      reason: a.reason,
      replacement: a.replacement,
    });
    await this.deletePod(wf, a.podName, 'agent pod failed', AGENT_DELETE_GRACE_SECONDS);
  }

  /**
   * Returns true when the agent could not be built or created (reported to the engine). An
   * existing agent pod is left alone: replacing a failed one is the engine's decision (replaceAgent).
   */
  private async ensureAgent(wf: Obj<Workflow>): Promise<boolean> {
    const ns = wf.metadata.namespace!;
    const name = agentPodName(wf.metadata.name!);
    const key = `${ns}/${name}`;
    const uid = wf.metadata.uid!;
    if (this.opts.failures.agentFailure(uid)) return false;
    if (this.opts.caches.pods.get(ns, name)) return false;
    if (this.opts.creations.pending(key)) return false;
    let plugins: PluginEntry[];
    let pod: V1Pod;
    try {
      plugins = agentPluginsOf(wf, this.opts);
      const pluginTokenSecrets = await this.pluginTokenSecrets(ns, plugins);
      // The agent runs under its own account (never the steps'): the workflow's
      // executor.serviceAccountName, else the controller's (default plugflow-agent), which the
      // namespace's admin creates and binds to the plugflow-agent ClusterRole (README).
      const serviceAccountName = wf.spec.executor?.serviceAccountName || this.opts.agent.serviceAccountName;
      await this.admission.requireAgentAccount(ns, serviceAccountName);
      pod = buildAgentPod(wf, plugins, { ...this.opts.agent, serviceAccountName, pluginTokenSecrets });
    } catch (err) {
      if (err instanceof ApiError && isTransient(err)) throw err;
      return this.agentFailed(wf, `the agent pod cannot be built: ${errorMessage(err)}`);
    }
    const refusal = await this.admission.refusal(ns, `agent pod ${name}`, pod, []);
    if (refusal) return this.agentFailed(wf, refusal);
    try {
      await this.opts.client.create(PODS, ns, pod);
      this.opts.metrics.podsCreated.inc();
      this.opts.creations.expect(key);
      this.opts.log.info('created agent pod', {
        workflow: `${ns}/${wf.metadata.name}`,
        pod: name,
        plugins: plugins.map((p) => `${p.namespace}/${p.name}`),
      });
    } catch (err) {
      if (isAlreadyExists(err)) {
        this.opts.creations.expect(key);
        return false;
      }
      if (isPermanent(err)) return this.agentFailed(wf, `the agent pod was refused: ${errorMessage(err)}`);
      throw err;
    }
    return false;
  }

  private agentFailed(wf: Obj<Workflow>, message: string): boolean {
    this.opts.log.warn('agent pod cannot be created; unfinished plugin and http steps fail', {
      workflow: `${wf.metadata.namespace}/${wf.metadata.name}`,
      reason: message,
    });
    this.opts.failures.setAgentFailure(wf.metadata.uid!, message);
    return true;
  }

  /**
   * Plugins that ask for a service account token run with their own service account
   * `<plugin>-executor-plugin`, looked up in the plugin's namespace; its token Secret
   * (`<account>.service-account-token`, or the first Secret listed on the account) is mounted.
   */
  private async pluginTokenSecrets(namespace: string, plugins: readonly PluginEntry[]): Promise<Record<string, string> | undefined> {
    const wanted = plugins.filter((p) => p.automountServiceAccountToken);
    if (wanted.length === 0) return undefined;
    const out: Record<string, string> = {};
    for (const p of wanted) {
      const sa = pluginServiceAccount(p);
      let account: { secrets?: { name?: string }[] };
      try {
        account = await this.opts.client.get(SERVICE_ACCOUNTS, sa.namespace, sa.name);
      } catch (err) {
        if (isNotFound(err))
          throw new Error(
            `plugin ${p.namespace}/${p.name} asks for a service account token but service account ${sa.namespace}/${sa.name} does not exist`,
          );
        throw err;
      }
      if (sa.namespace !== namespace) {
        throw new Error(
          `plugin ${p.namespace}/${p.name} asks for a service account token, but a pod in namespace ${namespace} cannot mount a token Secret of namespace ${sa.namespace}; install the plugin in ${namespace}`,
        );
      }
      out[p.name] = account.secrets?.[0]?.name ?? `${sa.name}.service-account-token`;
    }
    return out;
  }
}

/** Refusals a retry cannot cure: invalid objects, forbidden (except quota), missing namespace. */
function isPermanent(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.code === 403) return !/exceeded quota|quota/i.test(err.message);
  return err.code === 400 || err.code === 404 || err.code === 422;
}
