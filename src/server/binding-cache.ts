/**
 * The WorkflowEventBindings of every namespace (or of one), kept by an informer that runs with
 * the server's own account, so an event costs no list call. Each binding is compiled when it
 * is added or changed; a binding that does not compile is logged and gets a Warning Event right
 * away (once per generation) and is skipped for events. Per namespace the bindings are kept in
 * name order, the order a list call returns them in, and evaluated in that order.
 */
import { CustomObjectsApi, makeInformer, type Informer, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type WorkflowEventBinding } from '../api/index.js';
import { errorMessage as describeError } from '../log/error-message.js';
import type { Logger } from '../log/logger.js';
import { compileBinding, type CompiledBinding } from './binding-compile.js';
import type { BindingEventRecorder } from './binding-event-recorder.js';
import type { ServerMetrics } from './metrics.js';

export interface BindingCacheOptions {
  kubeConfig: KubeConfig;
  /** Watch one namespace only; all namespaces when unset. */
  namespace?: string;
  logger: Logger;
  recorder: BindingEventRecorder;
  metrics: ServerMetrics;
  /** Delay before the informer restarts after an error (default 2 s). */
  restartDelayMs?: number;
}

type BindingObject = WorkflowEventBinding & KubernetesObject;

export class BindingCache {
  private readonly byNamespace = new Map<string, Map<string, CompiledBinding>>();
  private readonly sorted = new Map<string, CompiledBinding[]>();
  /** `uid/version` of bindings already reported as broken, so a relist does not repeat it. */
  private readonly reported = new Set<string>();
  private readonly informer: Informer<BindingObject>;
  private stopped = false;
  private syncedFlag = false;
  private restartTimer?: NodeJS.Timeout;

  constructor(private readonly opts: BindingCacheOptions) {
    const api = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    const ns = opts.namespace;
    const path = ns
      ? `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURAL.workflowEventBinding}`
      : `/apis/${GROUP}/${VERSION}/${PLURAL.workflowEventBinding}`;
    const list = () =>
      ns
        ? api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.workflowEventBinding })
        : api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL.workflowEventBinding });
    this.informer = makeInformer<BindingObject>(opts.kubeConfig, path, list as never);
    this.informer.on('add', (b) => this.upsert(b));
    this.informer.on('update', (b) => this.upsert(b));
    this.informer.on('delete', (b) => this.remove(b));
    this.informer.on('error', (err) => this.onError(err));
  }

  /**
   * Lists and starts watching; resolves once the cache holds every binding. Transient failures
   * (429 while the API server's watch cache warms up, 5xx, connection errors) are retried until
   * `deadlineMs`; a refusal (401, 403) or a missing CRD (404) fails at once.
   */
  async start(deadlineMs = 60_000): Promise<void> {
    this.stopped = false;
    const until = Date.now() + deadlineMs;
    for (;;) {
      this.lastError = undefined;
      await this.informer.start();
      // The informer reports a failed list or watch through 'error' and resolves anyway.
      if (!this.lastError) break;
      await this.informer.stop();
      const status = statusOf(this.lastError);
      const transient = status === undefined || status === 429 || status >= 500;
      if (!transient || Date.now() > until || this.stopped) {
        throw new Error(`cannot list and watch ${PLURAL.workflowEventBinding}.${GROUP} with the server's account: ${describeError(this.lastError)}`);
      }
      this.opts.logger.info('WorkflowEventBinding cache not ready yet; retrying', { error: describeError(this.lastError) });
      await new Promise((r) => setTimeout(r, 500));
    }
    this.syncedFlag = true;
  }

  private lastError?: Error;

  get synced(): boolean {
    return this.syncedFlag;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
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
      this.opts.logger.warn('WorkflowEventBinding is invalid', { namespace: compiled.namespace, binding: compiled.name, problems: compiled.problems });
      this.opts.recorder.warning(compiled, message);
    } else if (compiled.problems.length === 0) {
      this.opts.logger.info(before ? 'WorkflowEventBinding updated' : 'WorkflowEventBinding added', { namespace: compiled.namespace, binding: compiled.name });
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

  private onError(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err));
    this.lastError = e;
    if (this.stopped) return;
    if (!this.syncedFlag) return; // start() reports it
    this.opts.logger.warn('WorkflowEventBinding watch failed; restarting', { error: describeError(e) });
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      this.informer.start().catch((err2) => this.onError(err2));
    }, this.opts.restartDelayMs ?? 2000);
    this.restartTimer.unref();
  }
}

/** HTTP status of a list error (client-node ApiException `code`) or a watch error (`statusCode`). */
function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e?.statusCode === 'number') return e.statusCode;
  if (typeof e?.code === 'number') return e.code;
  return undefined;
}
