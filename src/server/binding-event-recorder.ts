/**
 * Kubernetes Events on WorkflowEventBindings (type Warning, reason WorkflowEventBindingError),
 * written with the server's own account. The same problem on the same binding is one Event
 * whose `count` grows (patched at most once a second), so a flood of bad events costs the API
 * server little. Recording never throws and never delays an event: failures are logged.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { API_VERSION } from '../api/index.js';
import type { Logger } from '../log/logger.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError, isNotFound } from '../kube/errors.js';
import { EVENTS } from '../kube/resource.js';
import { errorMessage } from '../log/error-message.js';

export const BINDING_ERROR_REASON = 'WorkflowEventBindingError';
const COMPONENT = 'plugflow-server';
const MAX_MESSAGE = 1024;
const MAX_KEYS = 1000;
const PATCH_EVERY_MS = 1000;

export interface BindingRef {
  namespace: string;
  name: string;
  uid?: string;
}

interface Series {
  key: string;
  name: string;
  namespace: string;
  count: number;
  written: number;
  lastWrite: number;
  first: string;
  timer?: NodeJS.Timeout;
  pending: Promise<void>;
}

export class BindingEventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly host = hostname();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    /** The server's own identity: Events are written by the server, not by a caller. */
    private readonly kube: KubeClient,
    private readonly logger: Logger,
  ) {}

  /** Records a Warning on the binding (fire and forget). */
  warning(binding: BindingRef, message: string, reason = BINDING_ERROR_REASON): void {
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const key = `${binding.namespace}/${binding.name}/${binding.uid ?? ''}/${reason}/${text}`;
    const existing = this.series.get(key);
    if (existing) {
      existing.count++;
      this.schedulePatch(existing);
      return;
    }
    if (this.series.size >= MAX_KEYS) {
      const oldest = this.series.keys().next().value;
      if (oldest !== undefined) this.series.delete(oldest);
    }
    const hash = createHash('sha256').update(key).update(String(Date.now())).digest('hex').slice(0, 16);
    const now = new Date().toISOString();
    const s: Series = {
      key,
      name: `${binding.name.slice(0, 200)}.${hash}`,
      namespace: binding.namespace,
      count: 1,
      written: 1,
      lastWrite: Date.now(),
      first: now,
      pending: Promise.resolve(),
    };
    this.series.set(key, s);
    s.pending = this.track(
      this.kube
        .create(EVENTS, binding.namespace, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: s.name, namespace: binding.namespace },
          involvedObject: {
            apiVersion: API_VERSION,
            kind: 'WorkflowEventBinding',
            namespace: binding.namespace,
            name: binding.name,
            uid: binding.uid,
          },
          type: 'Warning',
          reason,
          message: text,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: COMPONENT, host: this.host },
          reportingComponent: COMPONENT,
          reportingInstance: this.host,
        })
        .then(() => undefined)
        .catch((err) => this.failed(binding, err)),
    );
  }

  /** Waits for every Event write started so far (shutdown, tests). */
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
        this.kube
          .mergePatch(EVENTS, s.namespace, s.name, { count, lastTimestamp: new Date().toISOString() })
          .then(() => void (s.written = count))
          .catch((err) => {
            // The Event expired (the API server keeps them about an hour): start a new one next time.
            if (isNotFound(err)) this.series.delete(s.key);
            else this.failed({ namespace: s.namespace, name: s.name }, err);
          }),
      ),
    );
  }

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  private failed(binding: BindingRef, err: unknown): void {
    const detail = err instanceof ApiError ? `${err.code}: ${err.message}` : errorMessage(err);
    this.logger.warn('could not record a Kubernetes Event on the binding', {
      namespace: binding.namespace,
      binding: binding.name,
      error: detail,
    });
  }
}
