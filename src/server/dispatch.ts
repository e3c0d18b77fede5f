/**
 * One event through the bindings of its namespace, in order (a worker of the event queue runs
 * this). For each binding whose selector is true: evaluate parameters and metadata, read the
 * WorkflowTemplate or ClusterWorkflowTemplate and create the Workflow — both with the caller's
 * identity, so a token can only submit what its role may read and create.
 *
 * Every per-binding failure is logged, recorded as a Warning Event (WorkflowEventBindingError)
 * on the binding and counted in plugflow_event_binding_total{outcome}; it never stops the other
 * bindings. The result lists the workflows created and the failures (the reply of
 * `--event-dispatch=sync`).
 */
import { randomBytes } from 'node:crypto';
import { eventEnvironment, eventMetadata } from '../expr/index.js';
import type { Logger } from '../log/logger.js';
import type { Caller } from './auth.js';
import { BindingFailure, evaluateSubmission, matches, warnOnBinding, type CompiledBinding, type EventEnv } from './binding-compile.js';
import type { BindingCache } from './binding-cache.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import { withholdQuotedValues } from './errors.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError, isTransient } from '../kube/errors.js';
import { CLUSTER_WORKFLOW_TEMPLATES, WORKFLOW_EVENT_BINDINGS, WORKFLOW_TEMPLATES, WORKFLOWS } from '../kube/resource.js';
import { DEDUPLICATED_REASON, SUBMITTED_REASON } from './binding-counters.js';
import { ANNOTATION_EVENT_DIGEST } from '../api/index.js';
import type { BindingOutcome, ServerMetrics } from './metrics.js';
import { eventDigest, workflowNameForEvent } from './event-id.js';
import { creatorOf } from './routes/userinfo.js';
import { defaultWorkflowName, workflowFromSubmission, type Submission } from './workflow-from-event.js';
import { errorMessage } from '../log/error-message.js';

export interface EventJob {
  namespace: string;
  discriminator: string;
  payload: unknown;
  /** The request's raw headers (`req.rawHeaders`); `metadata` is made from them only when a binding needs it. */
  headers: readonly string[];
  /** The event's id from its request headers (event-id.ts); a binding's spec.event.id overrides it. */
  eventId?: string;
  caller: Caller;
  /** performance.now() when the request arrived. */
  receivedAt: number;
}

export interface DispatchResult {
  /**
   * Workflows created, in binding order; `deduplicated` when this event's id had already
   * submitted it (the workflow named is the one that submission created).
   */
  workflows: { binding: string; name: string; deduplicated?: boolean }[];
  /**
   * Bindings that matched (or could not be evaluated) and failed; `retryable` when the API
   * server stayed unreachable or overloaded (the event bus then delivers the event again).
   */
  errors: { binding: string; reason: BindingOutcome; message: string; retryable?: boolean }[];
}

export interface DispatcherOptions {
  kube: KubeClient;
  bindings: BindingCache;
  recorder: EventRecorder;
  metrics: ServerMetrics;
  logger: Logger;
  /** Attempts at a generated name that the API server reports as taken (default 5). */
  nameAttempts?: number;
  /**
   * How long an accepted event keeps being retried while the API server is unreachable or
   * answers 429/5xx (restarting, overloaded) before it counts as failed (default 60 s).
   */
  retryForMs?: number;
}

/** First and longest pause between retries of a transient API failure. */
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 5_000;

export class Dispatcher {
  constructor(private readonly opts: DispatcherOptions) {}

  async dispatch(job: EventJob): Promise<DispatchResult> {
    const started = performance.now();
    const result: DispatchResult = { workflows: [], errors: [] };
    const bindings = this.opts.bindings.bindingsIn(job.namespace);
    const env: EventEnv | undefined =
      bindings.length === 0
        ? undefined
        : eventEnvironment({
            payload: job.payload,
            metadata: eventMetadata(job.headers),
            discriminator: job.discriminator,
            namespace: job.namespace,
          });
    for (const b of bindings) {
      if (b.problems.length > 0) {
        // Reported (log + Event) when the binding entered the cache; only counted here.
        this.count(b, 'invalid_binding');
        result.errors.push({ binding: b.name, reason: 'invalid_binding', message: `binding is invalid: ${b.problems.join('; ')}` });
        continue;
      }
      try {
        if (!matches(b, env!)) {
          this.count(b, 'no_match');
          continue;
        }
        const { name, deduplicated } = await this.submit(b, evaluateSubmission(b, env!, job.eventId), job);
        this.count(b, deduplicated ? 'deduplicated' : 'submitted');
        // One Event per replica and outcome whose count grows: the binding's counters (binding-counters.ts).
        this.opts.recorder.record(
          { metadata: { namespace: b.namespace, name: b.name, uid: b.uid } },
          'Normal',
          deduplicated ? DEDUPLICATED_REASON : SUBMITTED_REASON,
          deduplicated ? 'a repeat of an event whose workflow exists: none created' : 'a matching event submitted its workflow',
          WORKFLOW_EVENT_BINDINGS,
        );
        if (!deduplicated) this.opts.metrics.eventToWorkflowSeconds.observe((performance.now() - job.receivedAt) / 1000);
        this.opts.logger.info(deduplicated ? 'event already submitted its workflow' : 'workflow submitted from event', {
          namespace: b.namespace,
          binding: b.name,
          workflow: name,
          caller: job.caller.id,
        });
        result.workflows.push(deduplicated ? { binding: b.name, name, deduplicated } : { binding: b.name, name });
      } catch (err) {
        const f = err instanceof BindingFailure ? err : new BindingFailure('submit_error', errorMessage(err), isTransient(err));
        this.fail(b, f, job);
        result.errors.push({ binding: b.name, reason: f.outcome, message: f.message, ...(f.retryable ? { retryable: true } : {}) });
      }
    }
    this.opts.metrics.eventsDispatched.inc();
    this.opts.metrics.dispatchSeconds.observe((performance.now() - started) / 1000);
    return result;
  }

  private async submit(b: CompiledBinding, s: Submission, job: EventJob): Promise<{ name: string; deduplicated: boolean }> {
    const kube = this.opts.kube.as(job.caller.identity);
    const kind = s.template.clusterScope ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate';
    const templateName = s.template.clusterScope ? s.template.name : `${b.namespace}/${s.template.name}`;
    try {
      await this.retrying(`reading ${kind} ${templateName}`, () =>
        s.template.clusterScope
          ? kube.get(CLUSTER_WORKFLOW_TEMPLATES, undefined, s.template.name)
          : kube.get(WORKFLOW_TEMPLATES, b.namespace, s.template.name),
      );
    } catch (err) {
      throw classify(err, `reading ${kind} ${templateName}`, {
        404: ['template_not_found', `${kind} ${templateName} does not exist: create it before events arrive`],
      });
    }
    // An event with an id has one name per binding and sender (event-id.ts), and its workflow
    // carries the event's digest: a 409 on that name is this event's workflow only when the
    // digests agree — a workflow that merely took the name (another sender's guess, someone's
    // own create) is a clash, reported, never taken for this event.
    const byId = s.name === undefined && s.eventId !== undefined;
    const sender = s.eventId === undefined ? undefined : await this.senderOf(kube, job);
    // Without an id, a nonce of this submission: a create that reached the API server before its
    // answer was lost is then told from a name someone else took.
    const digest =
      sender === undefined ? randomBytes(16).toString('hex') : eventDigest(b.namespace, b.name, sender, s.eventId!, job.payload);
    const attempts = s.name || byId ? 1 : (this.opts.nameAttempts ?? 5);
    for (let i = 1; ; i++) {
      const name =
        s.name ??
        (byId
          ? workflowNameForEvent(s.template.name, b.namespace, b.name, sender!, s.eventId!)
          : defaultWorkflowName(s.template.name, new Date()));
      let retried = false;
      try {
        await this.retrying(`creating Workflow ${b.namespace}/${name}`, (attempt) => {
          retried = attempt > 1;
          return kube.create(WORKFLOWS, b.namespace, workflowFromSubmission(s, name, digest));
        });
        return { name, deduplicated: false };
      } catch (err) {
        const clash = err instanceof ApiError && err.code === 409;
        // The same event's workflow: made by an earlier delivery, another replica, or by this very
        // create before a broken connection hid its answer (the retry then finds it).
        if (clash && (await this.madeBy(b.namespace, name, digest))) return { name, deduplicated: sender !== undefined && !retried };
        if (clash && !byId && s.name === undefined && i < attempts) continue; // a generated name was taken: draw another
        throw classify(err, `creating Workflow ${b.namespace}/${name}`, {
          409: [
            'name_clash',
            byId
              ? `Workflow ${b.namespace}/${name}, the name this event's id gives, already exists and was not made by this event (another event's digest): nothing was created`
              : `Workflow ${b.namespace}/${name} already exists: spec.submit.metadata.name must yield a new name for each event`,
          ],
        });
      }
    }
  }

  /**
   * Who sent the event, as the API server knows the caller's token (its user name; `server` in
   * --auth-mode=server): the scope of event-id deduplication, so one sender's ids never
   * suppress another's. Cached per token (userinfo.ts); an API server that cannot answer now
   * fails the binding for now (retried).
   */
  private async senderOf(kube: KubeClient, job: EventJob): Promise<string> {
    if (job.caller.identity.kind !== 'token') return 'server';
    try {
      const name = await this.retrying('reviewing who sent the event', () => creatorOf(kube, job.caller));
      if (name) return name;
      throw new BindingFailure('unauthorized', "the API server names no user for the sender's token");
    } catch (err) {
      if (err instanceof BindingFailure) throw err;
      throw classify(err, 'reviewing who sent the event', {});
    }
  }

  /**
   * Whether the workflow named was created by the very event whose digest is `digest`. Read with
   * the server's own account (a sender may create workflows without reading them); only the
   * annotation is looked at, nothing of it reaches the caller.
   */
  private async madeBy(namespace: string, name: string, digest: string): Promise<boolean> {
    const kube = this.opts.kube;
    try {
      const existing = (await this.retrying(`reading Workflow ${namespace}/${name}`, () => kube.get(WORKFLOWS, namespace, name))) as {
        metadata?: { annotations?: Record<string, string> };
      };
      return existing.metadata?.annotations?.[ANNOTATION_EVENT_DIGEST] === digest;
    } catch {
      return false;
    }
  }

  /**
   * Runs `call`, retrying while the API server is unreachable or answers 429/5xx, with doubling
   * pauses, for up to `retryForMs`. The event was accepted (200): giving up on the first failure
   * would lose it to a routine API server restart.
   */
  private async retrying<T>(doing: string, call: (attempt: number) => Promise<T>): Promise<T> {
    const until = Date.now() + (this.opts.retryForMs ?? 60_000);
    let pause = RETRY_FIRST_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(attempt);
      } catch (err) {
        if (!isTransient(err) || Date.now() + pause > until) throw err;
        this.opts.logger.warn('API server unavailable while dispatching an event; retrying', {
          doing,
          attempt,
          error: errorMessage(err),
          retryInMs: pause,
        });
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, RETRY_MAX_MS);
      }
    }
  }

  private count(b: CompiledBinding, outcome: BindingOutcome): void {
    this.opts.metrics.bindingOutcomes.inc({ namespace: b.namespace, binding: b.name, outcome });
  }

  private fail(b: CompiledBinding, f: BindingFailure, job: EventJob): void {
    this.count(b, f.outcome);
    this.opts.logger.warn('event binding failed', {
      namespace: b.namespace,
      binding: b.name,
      outcome: f.outcome,
      error: f.message,
      caller: job.caller.id,
    });
    warnOnBinding(this.opts.recorder, b, f.message);
  }
}

/** An API error as a binding failure: the status picks the outcome, specific texts override. */
function classify(err: unknown, doing: string, special: Record<number, [BindingOutcome, string]>): BindingFailure {
  if (!(err instanceof ApiError) || err.code === 0)
    return new BindingFailure('submit_error', `${doing}: ${errorMessage(err)}`, isTransient(err));
  const hit = special[err.code];
  if (hit) return new BindingFailure(hit[0], hit[1]);
  // The API server quotes the values it refuses, and those may come from the event's payload:
  // the message is logged and recorded as an Event, so quoted values are shown by size only.
  const message = withholdQuotedValues(err.message);
  if (err.code === 403) return new BindingFailure('forbidden', `${doing} is forbidden for the caller: ${message}`);
  if (err.code === 401) return new BindingFailure('unauthorized', `${doing}: the caller's token was not accepted: ${message}`);
  return new BindingFailure('submit_error', `${doing}: ${err.code}: ${message}`, isTransient(err));
}
