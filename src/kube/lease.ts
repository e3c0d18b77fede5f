/**
 * coordination.k8s.io/v1 Leases, as the controller's leader election and its replicas' member
 * Leases use them: read one, or create it held by us when it does not exist yet.
 */
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { LEASES } from './resource.js';

export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** MicroTime as the API wants it. */
export const microTime = (d = new Date()): string => d.toISOString().replace('Z', '000Z');

/**
 * The Lease `name`, or — when there is none — a new one held by `identity` for `durationS`
 * (`created` true). A create that races another's is an AlreadyExists error for the caller.
 */
export async function readOrCreateLease(
  client: KubeClient,
  namespace: string,
  name: string,
  identity: string,
  durationS: number,
  labels?: Record<string, string>,
): Promise<{ lease: Lease; created: boolean }> {
  try {
    return { lease: await client.get<Lease>(LEASES, namespace, name), created: false };
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const now = microTime();
  const lease = await client.create<Lease>(LEASES, namespace, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { holderIdentity: identity, leaseDurationSeconds: durationS, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  });
  return { lease, created: true };
}
