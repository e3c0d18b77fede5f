/**
 * The WorkflowEventBindings of every namespace (or of one), kept by an informer that runs with
 * the server's own account, so an event costs no list call. Each binding is compiled when it
 * is added or changed; a binding that does not compile is logged and gets a Warning Event right
 * away (once per generation) and is skipped for events. Per namespace the bindings are kept in
 * name order, the order a list call returns them in, and evaluated in that order.
 *
 * The informer is the controller's (src/kube/informer.ts): watchdog, bookmarks, relist on 410,
 * and a staleness check that the server's /readyz reports (`readinessProblem`).
 */
import type { WorkflowEventBinding } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isTransient } from '../kube/errors.js';
import { DEFAULT_WATCHDOG_MS, Informer, dropManagedFields, readinessProblem, staleAfterMs } from '../kube/informer.js';
import type { KubeObject } from '../kube/object-store.js';
import { resourceLabel, WORKFLOW_EVENT_BINDINGS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';
import type { Logger } from '../log/logger.js';
import { compileBinding, warnOnBinding, type CompiledBinding } from './binding-compile.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import type { ServerMetrics } from './metrics.js';

export interface BindingCacheOptions {
  /** The server's own identity: it lists and watches the bindings. */
  client: KubeClient;
  /** Watch one namespace only; all namespaces when unset. */
  namespace?: string;
  logger: Logger;
  recorder: EventRecorder;
  metrics: ServerMetrics;
  /** Restart a silent watch after this long (default 150 s, the informer's). */
  watchdogMs?: number;
  /** /readyz fails when nothing was heard from the API server for this long (default 2 × watchdogMs). */
  staleMs?: number;
}

type BindingObject = WorkflowEventBinding & KubeObject;

export class BindingCache {
  private readonly byNamespace = new Map<string, Map<string, CompiledBinding>>();
  private readonly sorted = new Map<string, CompiledBinding[]>();
  /** `uid/version` of bindings already reported as broken, so a relist does not repeat it. */
  private readonly reported = new Set<string>();
  private readonly informer: Informer<BindingObject>;
  private readonly staleMs: number;
  /** While start() waits: gives up on a failure a retry cannot cure, or one past the deadline. */
  private onStartFailure?: (err: unknown) => void;

  constructor(private readonly opts: BindingCacheOptions) {
    const watchdogMs = opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    this.staleMs = opts.staleMs ?? staleAfterMs(watchdogMs);
    this.informer = new Informer<BindingObject>({
      client: opts.client,
      type: WORKFLOW_EVENT_BINDINGS,
      namespace: opts.namespace,
      // A binding compiles once per generation; re-delivering unchanged ones would do nothing.
      resyncMs: 0,
      watchdogMs,
      transform: dropManagedFields,
      onFailure: (err) => this.onStartFailure?.(err),
      log: opts.logger,
    });
    this.informer.addHandlers({
      onAdd: (b) => this.upsert(b),
      onUpdate: (_old, b) => this.upsert(b),
      onDelete: (b) => this.remove(b),
    });
  }

  /**
   * Lists and starts watching; resolves once the cache holds every binding. Transient failures
   * (429 while the API server's watch cache warms up, 5xx, connection errors) are retried until
   * `deadlineMs`; a refusal (401, 403) or a missing CRD (404) fails at once.
   */
  async start(deadlineMs = 60_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    const gaveUp = new Promise<unknown>((resolve) => {
      this.onStartFailure = (err) => {
        if (!isTransient(err) || Date.now() > until) resolve(err);
      };
    });
    this.informer.start();
    const failure = await Promise.race([this.informer.waitForSync().then(() => undefined), gaveUp.then((err) => ({ err }))]);
    this.onStartFailure = undefined;
    if (failure) {
      await this.informer.stop();
      throw new Error(
        `cannot list and watch ${resourceLabel(WORKFLOW_EVENT_BINDINGS)} with the server's account: ${errorMessage(failure.err)}`,
      );
    }
    if (!this.informer.hasSynced()) throw new Error('the WorkflowEventBinding cache was stopped before it synced');
  }

  get synced(): boolean {
    return this.informer.hasSynced();
  }

  /** Why /readyz must fail because of this cache (not synced, or stale), or undefined. */
  readinessProblem(): string | undefined {
    return readinessProblem(resourceLabel(WORKFLOW_EVENT_BINDINGS), this.informer, this.staleMs);
  }

  async stop(): Promise<void> {
    this.onStartFailure = undefined;
    await this.informer.stop();
  }

  /** The bindings of a namespace, in name order. */
  bindingsIn(namespace: string): readonly CompiledBinding[] {
    let list = this.sorted.get(namespace);
    if (!list) {
      const m = this.byNamespace.get(namespace);
      list = m ? [...m.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : [];
      this.sorted.set(namespace, list);
    }
    return list;
  }

  private upsert(obj: BindingObject): void {
    const compiled = compileBinding(obj);
    let m = this.byNamespace.get(compiled.namespace);
    if (!m) this.byNamespace.set(compiled.namespace, (m = new Map()));
    const before = m.get(compiled.name);
    if (before && before.uid === compiled.uid && before.version === compiled.version) return;
    m.set(compiled.name, compiled);
    this.sorted.delete(compiled.namespace);
    this.updateGauges();
    const key = `${compiled.uid}/${compiled.version}`;
    if (compiled.problems.length > 0 && !this.reported.has(key)) {
      this.reported.add(key);
      const message = `binding is invalid and will be skipped: ${compiled.problems.join('; ')}`;
      this.opts.logger.warn('WorkflowEventBinding is invalid', {
        namespace: compiled.namespace,
        binding: compiled.name,
        problems: compiled.problems,
      });
      warnOnBinding(this.opts.recorder, compiled, message);
    } else if (compiled.problems.length === 0) {
      this.opts.logger.info(before ? 'WorkflowEventBinding updated' : 'WorkflowEventBinding added', {
        namespace: compiled.namespace,
        binding: compiled.name,
      });
    }
  }

  private remove(obj: BindingObject): void {
    const ns = obj.metadata?.namespace ?? '';
    const m = this.byNamespace.get(ns);
    if (!m?.delete(obj.metadata?.name ?? '')) return;
    if (m.size === 0) this.byNamespace.delete(ns);
    this.sorted.delete(ns);
    this.updateGauges();
    this.opts.logger.info('WorkflowEventBinding removed', { namespace: ns, binding: obj.metadata?.name });
  }

  private updateGauges(): void {
    let all = 0;
    let broken = 0;
    for (const m of this.byNamespace.values()) {
      for (const b of m.values()) {
        all++;
        if (b.problems.length > 0) broken++;
      }
    }
    this.opts.metrics.bindingsCached.set(all);
    this.opts.metrics.bindingCompileErrors.set(broken);
  }
}
