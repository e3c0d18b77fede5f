/**
 * Where the server (and `plugflow cp`) may fetch a workflow's artifact from. A location in a
 * workflow's status can name any endpoint its author wrote into a template, and the downloader
 * streams back whatever it fetches — so fetching from that endpoint would let a tenant read an
 * internal service through the server. The downloader therefore fetches only from the stores of
 * artifact repositories, which the author does not write into the workflow:
 *
 *   - the repositories of the workflow's namespace: its `artifact-repositories` ConfigMap, and the
 *     controller-wide default (`artifact-repositories` in the installation's namespace), read
 *     with the process's own rights (the server may get ConfigMaps of that one name, nothing
 *     else) or the caller's; and the ConfigMap `spec.artifactRepositoryRef` names, read with
 *     the caller's rights;
 *   - endpoints the operator lists (`plugflow server --artifact-endpoint`).
 *
 * A GCS location has no endpoint of its own (the installation's PLUGFLOW_GCS_ENDPOINT or Google's),
 * so it is always fetched. Everything else is refused, naming the endpoint and the fix.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Artifact, Workflow } from '../api/index.js';
import { parseRepository, REPOSITORIES_CONFIGMAP, type ArtifactRepository } from '../artifacts/repository.js';
import type { KubeClient } from '../kube/client.js';
import { CONFIGMAPS } from '../kube/resource.js';
import { OperationRefused } from './errors.js';

export interface ArtifactTrust {
  /** The installation's namespace: its `artifact-repositories` is the controller-wide default. */
  installNamespace?: string;
  /** The process's own client, for the `artifact-repositories` ConfigMaps (the caller's when absent). */
  ownClient?: KubeClient;
  /** More trusted endpoints (`host:port` or URLs), from the operator. */
  endpoints?: readonly string[];
}

/** The origin (`https://host:port`) of an object-store or blob-store endpoint as a location gives it. */
export function endpointOrigin(endpoint: string, insecure?: boolean): string | undefined {
  try {
    return new URL(/^https?:\/\//i.test(endpoint) ? endpoint : `${insecure ? 'http' : 'https'}://${endpoint}`).origin;
  } catch {
    return undefined;
  }
}

/** The origin an artifact would be fetched from; undefined for GCS (no endpoint of its own). */
export function artifactOrigin(a: Artifact): string | undefined {
  if (a.vendorCObject) return undefined;
  if (a.vendorB) return endpointOrigin(a.vendorB.endpoint ?? '');
  return endpointOrigin(a.vendorAObject?.endpoint ?? '', a.vendorAObject?.insecure);
}

function repositoryOrigins(repo: Omit<ArtifactRepository, 'source'>): string[] {
  const out: (string | undefined)[] = [];
  if (repo.vendorAObject?.endpoint) out.push(endpointOrigin(repo.vendorAObject.endpoint, repo.vendorAObject.insecure));
  if (repo.vendorB?.endpoint) out.push(endpointOrigin(repo.vendorB.endpoint));
  return out.filter((o): o is string => o !== undefined);
}

/** Every repository's origins in a ConfigMap (entries that do not parse are skipped). */
function originsOf(cm: V1ConfigMap | undefined): string[] {
  const out: string[] = [];
  for (const [key, text] of Object.entries(cm?.data ?? {})) {
    try {
      out.push(...repositoryOrigins(parseRepository(text, key)));
    } catch {
      // Not a repository: it names no store to trust.
    }
  }
  return out;
}

/** The ConfigMap as the first of `clients` that may read it sees it; undefined when none may or it is missing. */
async function readConfigMap(clients: KubeClient[], namespace: string, name: string): Promise<V1ConfigMap | undefined> {
  for (const client of clients) {
    try {
      return await client.get<V1ConfigMap>(CONFIGMAPS, namespace, name);
    } catch {
      // missing or not readable with these rights: the next, else it trusts nothing
    }
  }
  return undefined;
}

/** The origins the downloader may fetch `wf`'s artifacts from. */
export async function trustedOrigins(caller: KubeClient, wf: Workflow, trust: ArtifactTrust): Promise<Set<string>> {
  const ns = wf.metadata.namespace ?? '';
  const own = trust.ownClient ? [trust.ownClient, caller] : [caller];
  const reads = [readConfigMap(own, ns, REPOSITORIES_CONFIGMAP)];
  const ref = wf.spec?.artifactRepositoryRef?.configMap;
  if (ref && ref !== REPOSITORIES_CONFIGMAP) reads.push(readConfigMap([caller], ns, ref));
  if (trust.installNamespace && trust.installNamespace !== ns)
    reads.push(readConfigMap(own, trust.installNamespace, REPOSITORIES_CONFIGMAP));
  const origins = new Set((await Promise.all(reads)).flatMap(originsOf));
  for (const e of trust.endpoints ?? []) {
    const o = endpointOrigin(e);
    if (o) origins.add(o);
  }
  return origins;
}

/** Refuses an artifact whose store is not one the downloader may fetch from. */
export function checkTrusted(a: Artifact, origins: ReadonlySet<string>, subject: string): void {
  // An http output was uploaded to a URL its author chose: fetching it would be fetching that URL.
  if (!a.vendorAObject && !a.vendorB && !a.vendorCObject)
    throw new OperationRefused(
      'forbidden',
      `artifact "${a.name}" of ${subject} is not in an object store${a.http ? ' (it was uploaded to its http url)' : a.plugin ? ` (artifact driver "${a.plugin.name ?? ''}" keeps it)` : ''}: ` +
        'the server downloads only from the stores of artifact repositories; fetch it from where it is',
    );
  const origin = artifactOrigin(a);
  if (origin === undefined && a.vendorCObject) return;
  if (origin !== undefined && origins.has(origin)) return;
  throw new OperationRefused(
    'forbidden',
    `artifact "${a.name}" of ${subject} is stored at ${origin ?? 'an endpoint that is not a URL'}, which is not an artifact ` +
      'repository of its namespace or of the installation: the server downloads only from those ' +
      '(an operator can trust more stores with plugflow server --artifact-endpoint)',
  );
}
