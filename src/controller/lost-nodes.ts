/**
 * Nodes that are gone, so that the steps whose pods ran there end instead of staying Running
 * forever. A kubelet that dies takes its pods' processes with it but nobody updates those pods:
 * without the cluster's node lifecycle controller (and for its first five minutes with it, until
 * taint-based eviction) they still say Running.
 *
 * Every `everyMs` the Nodes and the kubelets' Leases (kube-node-lease, renewed every 10 s) are
 * listed. A node is lost when its Node object is gone, its Ready condition is False or Unknown
 * (what the node lifecycle controller sets), or its Lease has not changed for `graceMs` (40 s,
 * the API's node-monitor-grace-period) — judged by our clock from when we saw it change, as for
 * our own Leases. For a lost node the controller's observation of each unfinished step pod there
 * becomes Deleted with the reason (observations.ts), so the step ends in Error naming the node,
 * and `retryStrategy` retries it (retryPolicy OnError or Always, as for any pod lost under a
 * step); one period later the pods are deleted (grace 0), so a kubelet that comes back does not
 * run them on.
 */
import { LABEL_WORKFLOW } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { LEASES, NODES, PODS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import type { ControllerCaches } from './caches.js';
import type { WorkQueue } from './work-queue.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const DEFAULT_NODE_GRACE_MS = 40_000;

export interface NodeFacts {
  name: string;
  /** The Ready condition's status and since when, if the node has one. */
  ready?: { status: string; since?: string };
}

export interface LeaseSeen {
  /** When (our clock) the kubelet's Lease was last seen changing. */
  changedAt: number;
}

/**
 * Why each node a pod names is lost, from one listing (pure). `podNodes` are the nodes pods of
 * ours are on; `nodes` undefined means the node list failed (nothing is judged lost for being
 * absent then).
 */
export function lostNodes(
  podNodes: Iterable<string>,
  nodes: NodeFacts[] | undefined,
  leases: ReadonlyMap<string, LeaseSeen>,
  nowMs: number,
  graceMs: number,
): Map<string, string> {
  const byName = new Map((nodes ?? []).map((n) => [n.name, n]));
  const lost = new Map<string, string>();
  for (const name of new Set(podNodes)) {
    const node = byName.get(name);
    if (!node) {
      if (nodes !== undefined) lost.set(name, `node "${name}" no longer exists`);
      continue;
    }
    if (node.ready && node.ready.status !== 'True') {
      lost.set(name, `node "${name}" is not ready (Ready=${node.ready.status}${node.ready.since ? ` since ${node.ready.since}` : ''})`);
      continue;
    }
    const lease = leases.get(name);
    if (lease && nowMs - lease.changedAt > graceMs)
      lost.set(name, `the kubelet of node "${name}" stopped renewing its lease ${Math.round((nowMs - lease.changedAt) / 1000)} s ago`);
  }
  return lost;
}

interface NodeObject {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
}

export interface LostNodeWatchOptions {
  client: KubeClient;
  log: Logger;
  /** The nodes our unfinished step pods are on now. */
  podNodes: () => Iterable<string>;
  /** A node was found lost: queue the workflows with pods there. */
  onLost: (node: string) => void;
  graceMs?: number;
  everyMs?: number;
}

export class LostNodeWatch {
  private lost = new Map<string, string>();
  /** Lost nodes whose pods are deleted on the next round (the steps' ends are recorded first). */
  private toClear = new Set<string>();
  private readonly leases = new Map<string, { rv: string; changedAt: number }>();
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(private readonly opts: LostNodeWatchOptions) {}

  /** Why `node` is lost, or undefined. */
  reasonFor(node: string | undefined): string | undefined {
    return node === undefined ? undefined : this.lost.get(node);
  }

  start(): void {
    this.timer = setInterval(() => void this.round(), this.opts.everyMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One listing; exported for the tests through `start`. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.clearPods();
      const podNodes = [...this.opts.podNodes()];
      if (podNodes.length === 0) {
        this.lost = new Map();
        return;
      }
      const nodes = await this.listNodes();
      await this.readLeases();
      const now = Date.now();
      const seen = new Map([...this.leases].map(([n, l]) => [n, { changedAt: l.changedAt }]));
      const found = lostNodes(podNodes, nodes, seen, now, this.opts.graceMs ?? DEFAULT_NODE_GRACE_MS);
      for (const [node, reason] of found) {
        if (this.lost.has(node)) continue;
        this.opts.log.warn('a node with step pods is lost; its unfinished steps end in Error', { node, reason });
        this.toClear.add(node);
        this.opts.onLost(node);
      }
      this.lost = found;
    } catch (err) {
      this.opts.log.warn('could not check the nodes of step pods; trying again', { error: errorMessage(err) });
    } finally {
      this.running = false;
    }
  }

  private async listNodes(): Promise<NodeFacts[] | undefined> {
    try {
      const list = await this.opts.client.list<NodeObject>(NODES);
      return list.items.map((n) => {
        const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
        return { name: n.metadata.name, ...(ready ? { ready: { status: ready.status, since: ready.lastTransitionTime } } : {}) };
      });
    } catch (err) {
      this.opts.log.warn('could not list nodes', { error: errorMessage(err) });
      return undefined;
    }
  }

  private async readLeases(): Promise<void> {
    const now = Date.now();
    const list = await this.opts.client.list<{ metadata: { name: string; resourceVersion?: string } }>(LEASES, {
      namespace: NODE_LEASE_NAMESPACE,
    });
    const names = new Set<string>();
    for (const l of list.items) {
      names.add(l.metadata.name);
      const rv = l.metadata.resourceVersion ?? '';
      const last = this.leases.get(l.metadata.name);
      if (last?.rv !== rv) this.leases.set(l.metadata.name, { rv, changedAt: now });
    }
    for (const name of this.leases.keys()) if (!names.has(name)) this.leases.delete(name);
  }

  /** Deletes our step pods on the nodes found lost last round (grace 0: no kubelet will confirm). */
  private async clearPods(): Promise<void> {
    const nodes = [...this.toClear];
    this.toClear.clear();
    for (const node of nodes) {
      const pods = await this.opts.client.list<{ metadata: { name: string; namespace: string } }>(PODS, {
        labelSelector: LABEL_WORKFLOW,
        fieldSelector: `spec.nodeName=${node},status.phase!=Succeeded,status.phase!=Failed`,
      });
      for (const p of pods.items) {
        await this.opts.client.delete(PODS, p.metadata.namespace, p.metadata.name, { gracePeriodSeconds: 0 }).catch((err: unknown) => {
          if (!isNotFound(err))
            this.opts.log.warn('could not delete a pod of a lost node', { pod: p.metadata.name, error: errorMessage(err) });
        });
      }
      if (pods.items.length > 0) this.opts.log.info('deleted the step pods of a lost node', { node, pods: pods.items.length });
    }
  }
}

/** The controller's watch: the nodes of its cached unfinished step pods; a lost node queues their workflows. */
export function lostNodeWatchOf(
  client: KubeClient,
  log: Logger,
  caches: ControllerCaches,
  queue: WorkQueue,
  timing: Pick<LostNodeWatchOptions, 'graceMs' | 'everyMs'> = {},
): LostNodeWatch {
  const unfinished = () => caches.pods.list().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  return new LostNodeWatch({
    client,
    log,
    ...(timing.graceMs !== undefined ? { graceMs: timing.graceMs } : {}),
    ...(timing.everyMs !== undefined ? { everyMs: timing.everyMs } : {}),
    podNodes: function* () {
      for (const p of unfinished()) if (p.spec?.nodeName) yield p.spec.nodeName;
    },
    onLost: (node) => {
      for (const p of unfinished()) {
        const wf = p.metadata?.labels?.[LABEL_WORKFLOW];
        if (p.spec?.nodeName === node && wf) queue.add(`${p.metadata!.namespace}/${wf}`);
      }
    },
  });
}
