/**
 * The benches' stand-in for a kubelet: completes every step pod of a namespace through the API.
 */
import { LABEL_WORKFLOW } from '../src/api/index.js';
import type { KubeClient } from '../src/kube/client.js';
import { PODS } from '../src/kube/resource.js';
import { encodeWaitReport } from '../src/pods/wait-report.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Completes step pods the way a very fast kubelet would (as kubemark's hollow node does):
 * Running, then Succeeded with the wait container's report, through pods/status, 16 at a time.
 * Keeps the resourceVersion its Succeeded write got, for the order check.
 */
export class HollowNode {
  /** Pod name → resourceVersion of the write that reported it Succeeded (absent when that write was retried). */
  readonly succeededRv = new Map<string, bigint>();
  private readonly abort = new AbortController();
  private readonly queue: string[] = [];
  private readonly seen = new Set<string>();
  private readonly retried = new Set<string>();
  private running?: Promise<void>;
  private workers: Promise<void>[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly concurrency = 16,
  ) {}

  start(): void {
    this.running = (async () => {
      while (!this.abort.signal.aborted) {
        await this.client
          .watch(
            PODS,
            { namespace: this.namespace, labelSelector: LABEL_WORKFLOW },
            (e) => {
              const pod = e.object as { metadata?: { name?: string }; status?: { phase?: string; containerStatuses?: unknown[] } };
              const name = pod.metadata?.name;
              if (e.type !== 'ADDED' || !name || this.seen.has(name) || pod.status?.containerStatuses) return;
              this.seen.add(name);
              this.queue.push(name);
            },
            this.abort.signal,
          )
          .catch(() => sleep(200));
      }
    })();
    this.workers = Array.from({ length: this.concurrency }, () => this.work());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const name = this.queue.shift();
      if (!name) {
        await sleep(20);
        continue;
      }
      const t = new Date().toISOString();
      const term = (message?: string) => ({
        terminated: { exitCode: 0, reason: 'Completed', startedAt: t, finishedAt: t, ...(message ? { message } : {}) },
      });
      const cs = (n: string, state: object) => ({ name: n, image: 'hollow', imageID: '', ready: false, restartCount: 0, state });
      try {
        await this.client.mergePatch(
          PODS,
          this.namespace,
          name,
          {
            status: {
              phase: 'Running',
              startTime: t,
              containerStatuses: [cs('main', { running: { startedAt: t } }), cs('wait', { running: { startedAt: t } })],
            },
          },
          'status',
        );
        const done = await this.client.mergePatch<{ metadata?: { resourceVersion?: string } }>(
          PODS,
          this.namespace,
          name,
          {
            status: {
              phase: 'Succeeded',
              containerStatuses: [cs('main', term()), cs('wait', term(encodeWaitReport({ exitCode: 0, result: 'ok', parameters: [] })))],
            },
          },
          'status',
        );
        const rv = done.metadata?.resourceVersion;
        if (rv && !this.retried.has(name)) this.succeededRv.set(name, BigInt(rv));
      } catch (err) {
        if ((err as { code?: number }).code !== 404) {
          this.retried.add(name);
          this.queue.push(name);
        }
      }
    }
  }
}
