/**
 * Who the live controller replicas are, through Leases (coordination.k8s.io/v1) in the
 * installation namespace: the API server is the only coordinator, there is no consensus of our
 * own. Every replica keeps a Lease of its own (`plugflow-member-<hash of its identity>`, labelled
 * `workflows.plugflow.io/controller-member`) renewed every `retryPeriodMs`, and lists the others' as often.
 *
 * A member is live while its Lease keeps changing: expiry is judged by *our* clock from the moment
 * we last saw its resourceVersion change, never by comparing its renewTime with our clock (the
 * same rule as leader-election.ts), so clock skew cannot keep a dead replica's share unserved or
 * let two replicas think they own one workflow for longer than a lease. A replica that cannot
 * renew its own Lease within `renewDeadlineMs` counts itself out (it owns nothing) before the
 * others can count it out (`leaseDurationMs` later), so a share is never served twice because of
 * a partition. A clean stop deletes the Lease: its share moves on the others' next list.
 *
 * The ring (shard-ring.ts) is rebuilt from the live members; `onChange` runs when they change.
 */
import { createHash } from 'node:crypto';
import { LABEL_PREFIX } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import { sleep } from '../kube/backoff.js';
import { LEASES } from '../kube/resource.js';
import { microTime, readOrCreateLease, type Lease } from '../kube/lease.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../log/error-message.js';
import { ShardRing } from './shard-ring.js';

export const LABEL_CONTROLLER_MEMBER = `${LABEL_PREFIX}controller-member`;

export interface ShardMembersOptions {
  client: KubeClient;
  namespace: string;
  identity: string;
  /** How long a member that stopped renewing still counts as live. Default 15 s. */
  leaseDurationMs?: number;
  /** How long this replica may fail to renew before it counts itself out. Default 10 s. */
  renewDeadlineMs?: number;
  /** How often the own Lease is renewed and the others' are listed. Default 2 s. */
  retryPeriodMs?: number;
  log: Logger;
  /** The live members changed: `ring` is the new assignment, `before` the old one. */
  onChange?: (ring: ShardRing, before: ShardRing) => void;
}

/** The name of a member's Lease: identities are pod names or host names, not always valid names. */
export function memberLeaseName(identity: string): string {
  return `plugflow-member-${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`;
}

export class ShardMembers {
  private current = new ShardRing([]);
  /** Lease name → the resourceVersion last seen and when (our clock). */
  private readonly seen = new Map<string, { rv: string; at: number }>();
  private lastRenew = 0;
  /** Holders of the Leases in the last list, live or not. */
  private listedIdentities = new Set<string>();
  /** Holders whose Leases this replica saw expire (and removed): gone, even once their Lease is. */
  private readonly expiredIdentities = new Set<string>();
  /** Identities asked about (isGone) that no list showed, since when. */
  private readonly unknownSince = new Map<string, number>();
  private readonly stopper = new AbortController();
  private loop?: Promise<void>;

  constructor(private readonly opts: ShardMembersOptions) {}

  get identity(): string {
    return this.opts.identity;
  }

  /** The assignment now: empty while this replica cannot renew its own Lease. */
  ring(): ShardRing {
    return this.current;
  }

  /** Whether this replica reconciles `key` now. */
  owns(key: string): boolean {
    return this.current.ownerOf(key) === this.opts.identity;
  }

  /**
   * Whether `identity` is certainly not a live replica: its Lease was seen and expired, or it has
   * not been listed for two periods since it was first asked about (a clean stop deletes the
   * Lease). A holder never listed yet may be a replica that started after our last list: it is
   * given those two periods to show up rather than taken from at once.
   */
  isGone(identity: string): boolean {
    if (this.current.members.includes(identity)) return false;
    if (this.listedIdentities.has(identity) || this.expiredIdentities.has(identity)) return true;
    const now = Date.now();
    const since = this.unknownSince.get(identity) ?? now;
    this.unknownSince.set(identity, since);
    return now - since > 2 * this.retryPeriod();
  }

  /** Announces this replica and reads the others once; afterwards both repeat in the background. */
  async start(): Promise<void> {
    await this.tick();
    this.loop = (async () => {
      const signal = this.stopper.signal;
      while (!signal.aborted) {
        await sleep(this.retryPeriod(), signal);
        if (!signal.aborted) await this.tick();
      }
    })();
  }

  /** Stops renewing; with `release` (a clean stop) the Lease is deleted so the others take over at once. */
  async stop(release = true): Promise<void> {
    this.stopper.abort();
    await this.loop;
    this.update(new ShardRing([]));
    if (!release) return;
    try {
      await this.opts.client.delete(LEASES, this.opts.namespace, memberLeaseName(this.opts.identity));
      this.opts.log.info('left the controller replicas', { identity: this.opts.identity });
    } catch (err) {
      if (!isNotFound(err)) this.opts.log.warn('could not delete the member lease', { error: errorMessage(err) });
    }
  }

  private async tick(): Promise<void> {
    if (await this.renew()) this.lastRenew = Date.now();
    const live = await this.listLive();
    const selfLive = Date.now() - this.lastRenew <= (this.opts.renewDeadlineMs ?? 10_000);
    if (!selfLive) {
      if (this.current.members.length > 0)
        this.opts.log.error('could not renew the member lease in time; reconciling nothing until it is renewed', {
          identity: this.opts.identity,
        });
      this.update(new ShardRing([]));
      return;
    }
    if (live === undefined) return; // the list failed: keep the last view (our own lease is fresh)
    live.add(this.opts.identity);
    this.update(new ShardRing(live));
  }

  private update(ring: ShardRing): void {
    if (ring.sameMembers(this.current)) return;
    const before = this.current;
    this.current = ring;
    this.opts.log.info('controller replicas changed', { members: ring.members, before: before.members, identity: this.opts.identity });
    this.opts.onChange?.(ring, before);
  }

  /** Creates or renews the own Lease; true when it is renewed now. */
  private async renew(): Promise<boolean> {
    const { client, namespace, identity } = this.opts;
    const name = memberLeaseName(identity);
    const durationS = Math.ceil((this.opts.leaseDurationMs ?? 15_000) / 1000);
    const now = microTime();
    try {
      const { lease, created } = await readOrCreateLease(client, namespace, name, identity, durationS, {
        [LABEL_CONTROLLER_MEMBER]: 'true',
      });
      if (created) return true;
      lease.spec = { ...lease.spec, holderIdentity: identity, leaseDurationSeconds: durationS, renewTime: now };
      lease.metadata.labels = { ...lease.metadata.labels, [LABEL_CONTROLLER_MEMBER]: 'true' };
      await client.replace<Lease>(LEASES, namespace, name, lease);
      return true;
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err)) this.opts.log.warn('could not renew the member lease', { error: errorMessage(err) });
      return false;
    }
  }

  /** The identities whose Leases changed within their duration (by our clock); undefined when the list failed. */
  private async listLive(): Promise<Set<string> | undefined> {
    let leases: Lease[];
    try {
      leases = (
        await this.opts.client.list<Lease>(LEASES, { namespace: this.opts.namespace, labelSelector: `${LABEL_CONTROLLER_MEMBER}=true` })
      ).items;
    } catch (err) {
      this.opts.log.warn('could not list the member leases', { error: errorMessage(err) });
      return undefined;
    }
    const now = Date.now();
    const live = new Set<string>();
    const names = new Set<string>();
    const expired: { name: string; rv: string }[] = [];
    for (const lease of leases) {
      const name = lease.metadata.name;
      names.add(name);
      const rv = lease.metadata.resourceVersion ?? '';
      const last = this.seen.get(name);
      if (last?.rv !== rv) this.seen.set(name, { rv, at: now });
      const at = this.seen.get(name)!.at;
      const holder = lease.spec?.holderIdentity;
      const durationMs = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
      if (holder && now - at <= durationMs) {
        live.add(holder);
        this.expiredIdentities.delete(holder);
      } else if (holder && holder !== this.opts.identity) {
        expired.push({ name, rv });
        this.expiredIdentities.add(holder);
      }
    }
    // A member that stopped renewing is removed for everyone: a replica that starts later would
    // otherwise count it live for a whole lease from its own first sight, and leave its share
    // unserved that long. Only at the version we judged (a renewal since makes this a conflict).
    for (const { name, rv } of expired) {
      try {
        await this.opts.client.delete(LEASES, this.opts.namespace, name, { resourceVersion: rv });
        this.opts.log.info('removed the Lease of a replica that stopped renewing it', { lease: name });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err))
          this.opts.log.warn('could not remove an expired member lease', { lease: name, error: errorMessage(err) });
      }
    }
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
    this.listedIdentities = new Set(leases.map((l) => l.spec?.holderIdentity ?? '').filter(Boolean));
    for (const id of this.listedIdentities) this.unknownSince.delete(id);
    return live;
  }

  private retryPeriod(): number {
    return this.opts.retryPeriodMs ?? 2_000;
  }
}
