/**
 * A step pod the workflow's status says was seen (`observed`), that the cache does not show while
 * the step runs, was deleted — the engine ends the step in Error "pod deleted" — unless the cache
 * is behind. It can be: the pod watch and the workflow watch are separate streams, and a replica
 * that has just gained a workflow (sharding.ts) has only just listed the pods of its bucket
 * (bucketed-pods.ts), while the status it reads was written by the replica before it, from that
 * one's cache. So before the engine runs on such a gap, the API server is asked (one list of the
 * workflow's pods): a pod it has means the cache is behind, and the workflow waits for it — for a
 * bounded time, after which the cache is trusted (and the list is not repeated for ever).
 *
 * Only with several replicas (`--sharding`), where hand-overs make the gap likely: finding the
 * seen pods walks every node of the status, which a lone controller's huge workflows should not pay.
 */
import { LABEL_WORKFLOW, type Workflow } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/object-store.js';
import { PODS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';

/** How soon a workflow waiting for its pods to show in the cache is looked at again. */
export const POD_LAG_RETRY_MS = 250;
/** How long a workflow waits for the cache at most. */
export const POD_LAG_LIMIT_MS = 30_000;

/** The pods of running steps the status says were seen and `cached` lacks (pure). */
export function unseenPods(wf: Workflow, cached: ReadonlySet<string>): string[] {
  const unseen: string[] = [];
  for (const node of Object.values(wf.status?.nodes ?? {})) {
    if (!node?.podName || node.observed !== true || (node.phase !== 'Pending' && node.phase !== 'Running')) continue;
    if (!cached.has(node.podName)) unseen.push(node.podName);
  }
  return unseen;
}

export class PodLag {
  /** Workflow key → when it started waiting (our clock). */
  private readonly since = new Map<string, number>();

  constructor(
    private readonly client: Pick<KubeClient, 'list'>,
    private readonly log?: Logger,
  ) {}

  /**
   * The pods of `wf` the API server has and `cachedPods` lacks, among those its running steps
   * were seen with; empty when there are none (or the wait is over), without a request when the
   * cache shows every such pod.
   */
  async behind(wf: Workflow, cachedPods: readonly KubeObject[], now = Date.now()): Promise<string[]> {
    const key = `${wf.metadata?.namespace}/${wf.metadata?.name}`;
    const unseen = unseenPods(wf, new Set(cachedPods.map((p) => p.metadata?.name ?? '')));
    if (unseen.length === 0) {
      this.since.delete(key);
      return [];
    }
    const since = this.since.get(key) ?? now;
    if (now - since > POD_LAG_LIMIT_MS) {
      this.since.delete(key);
      return [];
    }
    const listed = await this.client.list<KubeObject>(PODS, {
      namespace: wf.metadata?.namespace,
      labelSelector: `${LABEL_WORKFLOW}=${wf.metadata?.name}`,
    });
    const there = new Set(listed.items.map((p) => p.metadata?.name));
    const behind = unseen.filter((p) => there.has(p));
    if (behind.length > 0) {
      if (!this.since.has(key))
        this.log?.info('the pod cache is behind the workflow status; waiting for it', { workflow: key, pods: behind });
      this.since.set(key, since);
    } else this.since.delete(key);
    return behind;
  }
}
