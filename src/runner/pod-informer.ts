/**
 * The runner's view of pods: the shared resilient informer (src/kube/informer.ts: relists on
 * 410, backs off on errors, restarts silent watches, resyncs) over pods matching one field
 * selector, delivering pods to the runner's two callbacks. Pods arrive as raw JSON (string
 * timestamps).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { PODS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';

export interface PodWatchHandlers {
  upsert(pod: V1Pod): void;
  remove(pod: V1Pod): void;
}

export class PodWatch {
  private readonly informer: Informer<V1Pod & { metadata: { name: string } }>;

  /** Watches pods matching fieldSelector in `namespace`, or in all namespaces. */
  constructor(client: KubeClient, fieldSelector: string, handlers: PodWatchHandlers, log: Logger, namespace?: string) {
    this.informer = new Informer({ client, type: PODS, namespace, fieldSelector, log, resyncMs: 60_000 });
    this.informer.addHandlers({
      onAdd: (p) => handlers.upsert(p),
      onUpdate: (_old, p) => handlers.upsert(p),
      onDelete: (p) => handlers.remove(p),
    });
  }

  /** Lists (every current pod reaches `upsert`) and keeps watching. */
  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** The cached pods. */
  list(): readonly V1Pod[] {
    return this.informer.list();
  }
}
