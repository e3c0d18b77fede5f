/**
 * The one writer of Kubernetes Events, for the controller (workflows, CronWorkflows) and the
 * server (WorkflowEventBindings). Every Event is an API write, so the same reason and message on
 * the same object is one Event whose `count` grows (patched at most once a second) instead of a
 * new object each time — a workflow whose metrics are refused on every reconcile, or a flood of
 * bad webhook events, costs the API server little. Recording never throws and never delays the
 * caller: failures are logged.
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from './client.js';
import { ApiError, isNotFound } from './errors.js';
import { EVENTS, WORKFLOWS, apiVersionOf, type ResourceType } from './resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';

/** Longest message kept (the API server refuses longer ones). */
export const MAX_EVENT_MESSAGE = 1024;
/** Series remembered for aggregation; the oldest is forgotten beyond (a new Event starts then). */
const MAX_SERIES = 1000;
const PATCH_EVERY_MS = 1000;

/** The object an Event is about. */
export interface EventTarget {
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventRecorderOptions {
  client: KubeClient;
  log: Logger;
  /** `source.component` and `reportingComponent` (plugflow-controller, plugflow-server). */
  component: string;
  /** `reportingInstance`: which replica wrote it. */
  instance: string;
  /** Off: nothing is written (tests and benches that count writes). */
  enabled?: boolean;
}

interface Series {
  key: string;
  name: string;
  namespace: string;
  count: number;
  written: number;
  lastWrite: number;
  timer?: NodeJS.Timeout;
  pending: Promise<void>;
}

export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly opts: EventRecorderOptions) {}

  /** Records an Event on `target`, an object of resource type `of` (a Workflow by default), with the Event's own annotations. */
  record(
    target: EventTarget,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    of: ResourceType = WORKFLOWS,
    annotations?: Record<string, string>,
  ): void {
    if (this.opts.enabled === false) return;
    const meta = target.metadata;
    const namespace = meta.namespace ?? '';
    const name = meta.name ?? '';
    const text = message.length > MAX_EVENT_MESSAGE ? `${message.slice(0, MAX_EVENT_MESSAGE - 1)}…` : message;
    const key = `${of.plural}/${namespace}/${name}/${meta.uid ?? ''}/${type}/${reason}/${text}/${JSON.stringify(annotations ?? {})}`;
    const existing = this.series.get(key);
    if (existing) {
      existing.count++;
      this.schedulePatch(existing);
      return;
    }
    if (this.series.size >= MAX_SERIES) {
      const oldest = this.series.keys().next().value;
      if (oldest !== undefined) this.series.delete(oldest);
    }
    const hash = createHash('sha256').update(key).update(String(Date.now())).digest('hex').slice(0, 16);
    const now = new Date().toISOString();
    const s: Series = {
      key,
      name: `${name.slice(0, 200)}.${hash}`,
      namespace,
      count: 1,
      written: 1,
      lastWrite: Date.now(),
      pending: Promise.resolve(),
    };
    this.series.set(key, s);
    s.pending = this.track(
      this.opts.client
        .create(EVENTS, namespace, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: s.name, namespace, ...(annotations ? { annotations } : {}) },
          involvedObject: {
            apiVersion: apiVersionOf(of),
            kind: of.kind,
            namespace,
            name,
            uid: meta.uid,
            resourceVersion: meta.resourceVersion,
          },
          type,
          reason,
          message: text,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: this.opts.component },
          reportingComponent: this.opts.component,
          reportingInstance: this.opts.instance,
        })
        .then(() => undefined)
        .catch((err: unknown) => this.failed(of, namespace, name, reason, err)),
    );
  }

  /** Sends what is pending now and waits for every write started so far (shutdown, tests). */
  async flush(): Promise<void> {
    for (const s of this.series.values()) {
      if (s.timer) {
        clearTimeout(s.timer);
        s.timer = undefined;
        this.patch(s);
      }
    }
    await Promise.all([...this.inFlight]);
  }

  private schedulePatch(s: Series): void {
    if (s.timer) return;
    const wait = Math.max(0, s.lastWrite + PATCH_EVERY_MS - Date.now());
    s.timer = setTimeout(() => {
      s.timer = undefined;
      this.patch(s);
    }, wait);
    s.timer.unref();
  }

  private patch(s: Series): void {
    if (s.count === s.written) return;
    const count = s.count;
    s.lastWrite = Date.now();
    s.pending = this.track(
      s.pending.then(() =>
        this.opts.client
          .mergePatch(EVENTS, s.namespace, s.name, { count, lastTimestamp: new Date().toISOString() })
          .then(() => void (s.written = count))
          .catch((err: unknown) => {
            // The Event expired (the API server keeps them about an hour): start a new one next time.
            if (isNotFound(err)) this.series.delete(s.key);
            else this.failed(EVENTS, s.namespace, s.name, 'count', err);
          }),
      ),
    );
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  private failed(of: ResourceType, namespace: string, name: string, reason: string, err: unknown): void {
    const detail = err instanceof ApiError ? `${err.code}: ${err.message}` : errorMessage(err);
    this.opts.log.warn('could not record a Kubernetes Event', { object: `${of.kind} ${namespace}/${name}`, reason, error: detail });
  }
}
