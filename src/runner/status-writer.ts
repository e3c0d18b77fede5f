/**
 * Writes pod statuses through the pods/status subresource, one writer per pod: requests that
 * arrive while a write is in flight collapse into one more write with the latest state. Each
 * write reads the pod, computes the status from it (conditions keep their transition times,
 * fields the runner does not own are kept) and replaces it with the read resourceVersion; a
 * conflict means someone else wrote in between, so it reads and tries again.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { PODS } from '../kube/resource.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';

export type StatusFn = (current: V1Pod) => V1PodStatus;

interface Slot {
  compute: StatusFn;
  uid: string;
  dirty: boolean;
  running?: Promise<void>;
}

export class StatusWriter {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly client: KubeClient,
    private readonly log: Logger,
  ) {}

  /** Asks for the pod's status to be written (soon) as `compute` says. */
  request(namespace: string, name: string, uid: string, compute: StatusFn): Promise<void> {
    const key = `${namespace}/${name}`;
    let slot = this.slots.get(key);
    if (!slot || slot.uid !== uid) {
      slot = { compute, uid, dirty: true };
      this.slots.set(key, slot);
    }
    slot.compute = compute;
    slot.dirty = true;
    slot.running ??= this.drain(namespace, name, slot).finally(() => {
      slot.running = undefined;
      if (this.slots.get(key) === slot && !slot.dirty) this.slots.delete(key);
    });
    return slot.running;
  }

  private async drain(namespace: string, name: string, slot: Slot): Promise<void> {
    let failures = 0;
    while (slot.dirty) {
      slot.dirty = false;
      try {
        await this.write(namespace, name, slot);
        failures = 0;
      } catch (err) {
        failures++;
        this.log.warn('writing pod status failed; will retry', { pod: `${namespace}/${name}`, error: errorMessage(err) });
        slot.dirty = true;
        await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** failures, 10_000)));
      }
    }
  }

  private async write(namespace: string, name: string, slot: Slot): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let pod: V1Pod;
      try {
        pod = await this.client.get<V1Pod>(PODS, namespace, name);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      // A pod of the same name created anew is not ours to update.
      if (pod.metadata?.uid !== slot.uid) return;
      pod.status = { ...pod.status, ...slot.compute(pod) };
      try {
        await this.client.replace(PODS, namespace, name, pod, 'status');
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 10) throw err;
      }
    }
  }
}
