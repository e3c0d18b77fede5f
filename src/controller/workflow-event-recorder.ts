/**
 * Kubernetes Events on workflows — the essentials only (started, finished), because every Event
 * is an API write and a workflow should cost few of them. Recording is best effort: a failed
 * Event is logged and never fails a reconcile.
 */
import type { Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';

import { EVENTS, WORKFLOWS, apiVersionOf, type ResourceType } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';

export const EVENT_SOURCE = 'plugflow-controller';

export class WorkflowEventRecorder {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly client: KubeClient,
    private readonly log: Logger,
    private readonly instance: string,
    private readonly enabled = true,
  ) {}

  /** Records an Event on `wf` (a Workflow, or another plugflow object of `type`). */
  record(wf: Pick<Workflow, 'metadata'>, type: 'Normal' | 'Warning', reason: string, message: string, of: ResourceType = WORKFLOWS): void {
    if (!this.enabled) return;
    const now = new Date().toISOString();
    const meta = wf.metadata;
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${meta.name}.`, namespace: meta.namespace },
      involvedObject: {
        apiVersion: apiVersionOf(of),
        kind: of.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: EVENT_SOURCE },
      reportingComponent: EVENT_SOURCE,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const p = this.client.create(EVENTS, meta.namespace, body).catch((err: unknown) => {
      this.log.warn('could not record an event', { workflow: `${meta.namespace}/${meta.name}`, reason, error: errorMessage(err) });
    });
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Waits for Events still being sent (graceful shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
