/**
 * What the controller learnt the hard way and the engine must hear about: pods that cannot be
 * created (invalid spec, refused by admission) and agent pods that cannot be built or created.
 * Kept per workflow uid in memory only: a restarted controller tries again, fails the same way
 * and reaches the same result, so nothing here needs to be persisted.
 */
import type { KubeObject } from '../kube/object-store.js';

export interface PodCreateFailure {
  nodeId: string;
  message: string;
}

export class FailureMemory {
  private readonly pods = new Map<string, Map<string, PodCreateFailure>>();
  private readonly agents = new Map<string, string>();

  podFailures(uid: string): ReadonlyMap<string, PodCreateFailure> | undefined {
    return this.pods.get(uid);
  }

  addPodFailure(uid: string, podName: string, failure: PodCreateFailure): void {
    let m = this.pods.get(uid);
    if (!m) this.pods.set(uid, (m = new Map()));
    m.set(podName, failure);
  }

  agentFailure(uid: string): string | undefined {
    return this.agents.get(uid);
  }

  setAgentFailure(uid: string, message: string): void {
    this.agents.set(uid, message);
  }

  /** Forgets a workflow (deleted, or finished and cleaned up). */
  forget(uid: string): void {
    this.pods.delete(uid);
    this.agents.delete(uid);
  }
}

/**
 * Pods (and deletions) this controller asked for that its cache has not shown yet. Without this,
 * a reconcile that runs before the watch delivers the new pod would ask to create it again (a
 * harmless 409, but an API write). Entries expire, so a lost watch event cannot block a pod
 * forever.
 */
export class Expectations {
  private readonly items = new Map<string, number>();

  constructor(private readonly ttlMs = 30_000) {}

  expect(key: string): void {
    this.items.set(key, Date.now() + this.ttlMs);
  }

  pending(key: string): boolean {
    const until = this.items.get(key);
    if (until === undefined) return false;
    if (until < Date.now()) {
      this.items.delete(key);
      return false;
    }
    return true;
  }

  observed(key: string): void {
    this.items.delete(key);
  }

  size(): number {
    return this.items.size;
  }
}

/**
 * Deletions are expected per pod uid, not per name: the agent pod's name is reused by its
 * replacement, which must not look "being deleted" because its predecessor was.
 */
export const deletionKey = (pod: KubeObject): string => `${pod.metadata?.namespace}/${pod.metadata?.name}/${pod.metadata?.uid}`;
