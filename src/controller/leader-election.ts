/**
 * Lease-based leader election (coordination.k8s.io/v1 Lease in the installation namespace), so
 * that of several controller replicas exactly one reconciles. Uses only get, create and update
 * (the verbs manifests/base/rbac-controller.yaml grants).
 *
 * Expiry is judged by *our* clock from the moment we last saw the lease change (its
 * resourceVersion), never by comparing the holder's renewTime with our clock, so clock skew
 * between nodes cannot make two replicas leaders. A leader that cannot renew within
 * `renewDeadlineMs` steps down (the caller stops reconciling); on a clean stop the lease is
 * released so a successor takes over at once instead of waiting for expiry.
 */
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isConflict } from '../kube/errors.js';
import { sleep } from '../kube/backoff.js';
import { LEASES } from '../kube/resource.js';
import { microTime, readOrCreateLease, type Lease } from '../kube/lease.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log?: Logger;
}

export class LeaderElector {
  private leader = false;
  private observed?: { rv: string; at: number; holder: string };
  private readonly stopper = new AbortController();
  private loop?: Promise<void>;
  private lost?: () => void;

  constructor(private readonly opts: LeaderElectionOptions) {}

  isLeader(): boolean {
    return this.leader;
  }

  /**
   * Resolves once this process holds the lease (or `stop()` was called: then it resolves with
   * false). Afterwards it keeps renewing; `onLost` runs if leadership is lost.
   */
  async acquire(onLost: () => void): Promise<boolean> {
    this.lost = onLost;
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) {
        this.leader = true;
        this.opts.log?.info('became leader', { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity });
        this.loop = this.renewLoop();
        return true;
      }
      await sleep(this.retryPeriod(), signal);
    }
    return false;
  }

  /** Stops renewing and releases the lease if held. */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
    if (!this.leader) return;
    this.leader = false;
    try {
      const lease = await this.opts.client.get<Lease>(LEASES, this.opts.namespace, this.opts.name);
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() };
      await this.opts.client.replace(LEASES, this.opts.namespace, this.opts.name, lease);
      this.opts.log?.info('released leader lease', { lease: `${this.opts.namespace}/${this.opts.name}` });
    } catch (err) {
      this.opts.log?.warn('could not release the leader lease', { error: errorMessage(err) });
    }
  }

  private async renewLoop(): Promise<void> {
    const signal = this.stopper.signal;
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.retryPeriod(), signal);
      if (signal.aborted) return;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = Date.now();
        continue;
      }
      if (
        Date.now() - lastRenew > (this.opts.renewDeadlineMs ?? 10_000) ||
        (this.observed && this.observed.holder !== this.opts.identity)
      ) {
        this.leader = false;
        this.opts.log?.error('lost leadership', { lease: `${this.opts.namespace}/${this.opts.name}`, holder: this.observed?.holder });
        this.lost?.();
        return;
      }
    }
  }

  /** One attempt; true when we hold the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name, identity } = this.opts;
    const durationS = Math.ceil((this.opts.leaseDurationMs ?? 15_000) / 1000);
    const now = microTime();
    try {
      const { lease, created } = await readOrCreateLease(client, namespace, name, identity, durationS);
      this.observe(lease);
      if (created) return true;
      const spec = lease.spec ?? {};
      const mine = spec.holderIdentity === identity;
      const free = !spec.holderIdentity || Date.now() - this.observed!.at > (spec.leaseDurationSeconds ?? durationS) * 1000;
      if (!mine && !free) return false;
      lease.spec = {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: durationS,
        renewTime: now,
        ...(mine ? {} : { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
      };
      const updated = await client.replace<Lease>(LEASES, namespace, name, lease);
      this.observe(updated);
      return true;
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err)) this.opts.log?.warn('leader election attempt failed', { error: errorMessage(err) });
      return false;
    }
  }

  private observe(lease: Lease): void {
    const rv = lease.metadata.resourceVersion ?? '';
    if (this.observed?.rv !== rv) this.observed = { rv, at: Date.now(), holder: lease.spec?.holderIdentity ?? '' };
  }

  private retryPeriod(): number {
    return this.opts.retryPeriodMs ?? 2_000;
  }
}
