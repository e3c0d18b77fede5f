/**
 * Getting artifacts out of a workflow, with the rights of whoever asks: the workflow and the
 * Secrets its artifact locations name are read with the caller's client, so exactly those who may
 * read both can download (the server's `/artifact-files/…` route and `plugflow cp` use this).
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { Readable } from 'node:stream';
import { inflateWorkflow, type Artifact, type NodeStatus, type Workflow } from '../api/index.js';
import type { StoredLocation } from '../artifacts/plan.js';
import type { Credentials } from '../artifacts/store.js';
import type { KubeClient } from '../kube/client.js';
import { SECRETS, WORKFLOWS } from '../kube/resource.js';
import { checkTrusted, trustedOrigins, type ArtifactTrust } from './artifact-trust.js';
import { OperationRefused } from './errors.js';
import { collectedBy } from '../engine/index.js';
import { gcsEndpointFromEnv } from '../artifacts/settings.js';
import { storedInputArtifact } from './input-artifacts.js';

export interface NodeArtifact {
  node: NodeStatus;
  artifact: Artifact;
}

/**
 * The output artifacts of a workflow's nodes (pods, and steps/DAGs that pass one on), optionally
 * of one node (by id, name or display name) and one artifact name. Pure.
 */
export function nodeArtifacts(wf: Workflow, node?: string, artifact?: string): NodeArtifact[] {
  const out: NodeArtifact[] = [];
  for (const n of Object.values(wf.status?.nodes ?? {})) {
    if (node !== undefined && n.id !== node && n.name !== node && n.displayName !== node) continue;
    for (const a of n.outputs?.artifacts ?? []) {
      if (artifact !== undefined && a.name !== artifact) continue;
      if (a.vendorAObject?.key || a.vendorB?.blob || a.vendorCObject?.key) out.push({ node: n, artifact: a });
    }
  }
  return out;
}

/** A node's output artifact of that name that names no store (the download refuses it). */
function unstoredOutput(wf: Workflow, node: string, artifact: string): Artifact | undefined {
  for (const n of Object.values(wf.status?.nodes ?? {}))
    if (n.id === node || n.name === node || n.displayName === node) {
      const a = n.outputs?.artifacts?.find((x) => x.name === artifact);
      if (a) return a;
    }
  return undefined;
}

/** Reads the workflow as the caller. */
export async function readWorkflow(client: KubeClient, namespace: string, name: string): Promise<Workflow> {
  return inflateWorkflow(await client.get<Workflow>(WORKFLOWS, namespace, name));
}

/** The artifact's credentials, reading its Secrets as the caller (who needs `get` on them). */
export async function artifactCredentials(client: KubeClient, namespace: string, a: Artifact): Promise<Credentials> {
  const value = async (ref: { name?: string; key: string }, what: string): Promise<string> => {
    const secret = await client.get<V1Secret>(SECRETS, namespace, ref.name ?? '');
    const data = secret.data?.[ref.key];
    if (data === undefined)
      throw new OperationRefused(
        'precondition',
        `artifact "${a.name}": Secret ${namespace}/${ref.name} has no key "${ref.key}" (its ${what})`,
      );
    return Buffer.from(data, 'base64').toString('utf8');
  };
  if (a.vendorB) return a.vendorB.accountKeySecret ? { accountKey: await value(a.vendorB.accountKeySecret, 'account key') } : undefined;
  if (a.vendorCObject) {
    const ref = a.vendorCObject.serviceAccountKeySecret;
    return ref ? { serviceAccountKey: await value(ref, 'service account key') } : undefined;
  }
  const loc = a.vendorAObject;
  if (!loc?.accessKeySecret || !loc.secretKeySecret) return undefined;
  return { accessKey: await value(loc.accessKeySecret, 'access key'), secretKey: await value(loc.secretKeySecret, 'secret key') };
}

/** Where the artifact's bytes are, in the drivers' terms. */
export function storeLocationOf(a: Artifact): StoredLocation {
  const g = a.vendorCObject;
  if (g) {
    if (!g.bucket || !g.key) throw new OperationRefused('precondition', `artifact "${a.name}" has no GCS location`);
    const endpoint = gcsEndpointFromEnv();
    return { kind: 'gcs', bucket: g.bucket, key: g.key, ...(endpoint ? { endpoint } : {}) };
  }
  const b = a.vendorB;
  if (b) {
    if (!b.endpoint || !b.container || !b.blob)
      throw new OperationRefused('precondition', `artifact "${a.name}" has no blob-store location`);
    return { kind: 'blob', endpoint: b.endpoint, container: b.container, blob: b.blob };
  }
  const loc = a.vendorAObject;
  if (!loc?.bucket || !loc.key || !loc.endpoint)
    throw new OperationRefused('precondition', `artifact "${a.name}" has no object-store location`);
  return {
    bucket: loc.bucket,
    key: loc.key,
    endpoint: loc.endpoint,
    ...(loc.region ? { region: loc.region } : {}),
    ...(loc.insecure !== undefined ? { insecure: loc.insecure } : {}),
  };
}

/** Opens the stored object of one node's output artifact (or input artifact: input-artifacts.ts) as the caller; the stream is the object as stored. */
export async function openNodeArtifact(
  client: KubeClient,
  namespace: string,
  workflow: string,
  node: string,
  artifact: string,
  trust: ArtifactTrust = {},
  side: 'outputs' | 'inputs' = 'outputs',
): Promise<OpenedArtifact> {
  const wf = await readWorkflow(client, namespace, workflow);
  const a = side === 'inputs' ? storedInputArtifact(wf, node, artifact) : nodeArtifacts(wf, node, artifact)[0]?.artifact;
  // An output that is not in a store (an http output) is refused saying so, not "no such artifact".
  const elsewhere = a ? undefined : unstoredOutput(wf, node, artifact);
  if (elsewhere) checkTrusted(elsewhere, new Set(), `workflow ${namespace}/${workflow}`);
  if (!a)
    throw new OperationRefused('not-found', `workflow ${namespace}/${workflow} has no output artifact "${artifact}" on node "${node}"`);
  return openArtifact(client, wf, a, trust);
}

export interface OpenedArtifact {
  body: Readable;
  size?: number;
  fileName: string;
  close(): void;
}

/** Opens one artifact of `wf` from its store as the caller, after the trust check. */
export async function openArtifact(client: KubeClient, wf: Workflow, a: Artifact, trust: ArtifactTrust): Promise<OpenedArtifact> {
  const subject = `workflow ${wf.metadata.namespace}/${wf.metadata.name}`;
  const gone = collectedBy(wf, a);
  if (gone) throw new OperationRefused('not-found', `artifact "${a.name}" of ${subject} was deleted by artifactGC (${gone})`);
  // Only from an artifact repository's store: never an endpoint the workflow's author chose (artifact-trust.ts).
  checkTrusted(a, await trustedOrigins(client, wf, trust), subject);
  const creds = await artifactCredentials(client, wf.metadata.namespace ?? '', a);
  const { openStoredOrTree } = await import('../artifacts/store.js');
  let obj;
  try {
    obj = await openStoredOrTree(storeLocationOf(a), creds);
  } catch (err) {
    throw new OperationRefused('unavailable', (err as Error).message);
  }
  const base = (a.vendorB?.blob ?? a.vendorCObject?.key ?? a.vendorAObject?.key ?? '').split('/').pop() || a.name;
  // A directory stored without archive comes as a tar+gzip built on the fly.
  const { directory, ...rest } = obj;
  return { ...rest, fileName: directory ? `${base}.tgz` : base };
}
