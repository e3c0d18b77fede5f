/**
 * Downward API values (env `valueFrom.fieldRef` / `resourceFieldRef` and downwardAPI volume
 * files), computed the way a kubelet does for the fields a pod on the local runner has.
 */
import type { V1Container, V1ObjectFieldSelector, V1Pod, V1ResourceFieldSelector } from '@kubernetes/client-node';
import { parseQuantity } from '../api/index.js';

/** The runner's node runs everything on loopback. */
export const LOCAL_IP = '127.0.0.1';

/** Resolves a fieldRef; throws with the unsupported path named. */
export function fieldRefValue(pod: V1Pod, ref: V1ObjectFieldSelector, forVolume = false): string {
  const path = ref.fieldPath;
  const meta = pod.metadata ?? {};
  const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (keyed) return (keyed[1] === 'labels' ? meta.labels : meta.annotations)?.[keyed[2]] ?? '';
  switch (path) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
    case 'status.podIP':
    case 'status.podIPs':
      return LOCAL_IP;
    case 'metadata.labels':
    case 'metadata.annotations':
      if (forVolume) return formatMap((path === 'metadata.labels' ? meta.labels : meta.annotations) ?? {});
  }
  throw new Error(`fieldRef ${path} is not supported`);
}

/** `key="value"` lines, sorted, as in a downwardAPI volume file. */
function formatMap(m: Record<string, string>): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`)
    .join('\n');
}

/** Node capacity used when a container has no limit (the runner's node has no real budget). */
export interface NodeResources {
  cpu: number;
  memory: number;
  ephemeralStorage: number;
}

/** Resolves a resourceFieldRef of `container` (limits fall back to the node's capacity). */
export function resourceFieldValue(container: V1Container, ref: V1ResourceFieldSelector, node: NodeResources): string {
  const [kind, resource] = ref.resource.split('.', 2) as [string, string];
  if ((kind !== 'limits' && kind !== 'requests') || !['cpu', 'memory', 'ephemeral-storage'].includes(resource)) {
    throw new Error(`resourceFieldRef ${ref.resource} is not supported`);
  }
  const set = kind === 'limits' ? container.resources?.limits : (container.resources?.requests ?? container.resources?.limits);
  const fallback = kind === 'limits' ? { cpu: node.cpu, memory: node.memory, 'ephemeral-storage': node.ephemeralStorage }[resource]! : 0;
  const value =
    set?.[resource] !== undefined
      ? parseQuantity(set[resource], `resources.${kind}.${resource}`).milli
      : BigInt(Math.round(fallback * 1000));
  const divisor = ref.divisor !== undefined ? parseQuantity(ref.divisor, 'resourceFieldRef.divisor').milli : 1000n;
  if (divisor <= 0n) throw new Error(`resourceFieldRef ${ref.resource}: divisor ${ref.divisor} must be positive`);
  // Rounded up, as the kubelet does (250m of CPU with the default divisor 1 is 1).
  return String((value + divisor - 1n) / divisor);
}
