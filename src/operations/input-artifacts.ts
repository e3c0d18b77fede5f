/**
 * A node's input artifacts, for the UI's node panel and the peer's download path
 * `/artifact-files/{ns}/workflows/{name}/{nodeId}/inputs/{artifact}`.
 *
 * The server downloads an input artifact only as it downloads an output: from an artifact
 * repository's store (artifact-trust.ts). An input that the step fetches itself — over http,
 * from git, from hdfs or another location the author wrote into the workflow — or whose data is
 * written in the workflow (raw) is never fetched by the server: it is listed with the reason.
 * An input in an object store the author named (not a repository's) is refused by the trust
 * check, like such an output.
 */
import { inflateWorkflow, type Artifact, type Workflow } from '../api/index.js';
import { collectedBy } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { WORKFLOWS } from '../kube/resource.js';
import { checkTrusted, trustedOrigins, type ArtifactTrust } from './artifact-trust.js';
import { OperationRefused } from './errors.js';

export interface InputArtifactView {
  name: string;
  path?: string;
  /** Where it comes from, in words: `object store bucket/key`, `http https://…`, `git https://…`, `raw data…`. */
  from: string;
  /** The server will download it (GET …/inputs/{name}); otherwise `reason` says why not. */
  downloadable: boolean;
  reason?: string;
}

/** Where an artifact comes from, in words, and whether it is in a store the server can read (vendorAObject, vendorB, vendorCObject). Pure. */
export function sourceOf(a: Artifact): { from: string; stored: boolean } {
  if (a.vendorAObject?.key) return { from: `object store ${a.vendorAObject.bucket ?? ''}/${a.vendorAObject.key}`, stored: true };
  if (a.vendorB?.blob) return { from: `blob store ${a.vendorB.container ?? ''}/${a.vendorB.blob}`, stored: true };
  if (a.vendorCObject?.key) return { from: `GCS ${a.vendorCObject.bucket ?? ''}/${a.vendorCObject.key}`, stored: true };
  if (a.http) return { from: `http ${a.http.url}`, stored: false };
  if (a.git) return { from: `git ${a.git.repo}${a.git.revision ? ` @ ${a.git.revision}` : ''}`, stored: false };
  if (a.raw) return { from: 'raw data written in the workflow', stored: false };
  if (a.hdfs) return { from: `hdfs ${a.hdfs.path}`, stored: false };
  const kind = Object.keys(a).find((k) => ['vendorO', 'vendorDObject', 'vendorAObject', 'vendorB', 'vendorCObject'].includes(k));
  return { from: kind ? `${kind} (no key)` : 'no location (optional, not supplied)', stored: false };
}

/** Why the server does not download an input that is not in a store. */
function notStoredReason(a: Artifact, from: string): string {
  const what = a.raw
    ? 'its data is written in the workflow itself'
    : a.http || a.git || a.hdfs
      ? `the step fetches it itself (${from})`
      : `it has no stored location (${from})`;
  return `input artifact "${a.name}" is not in an artifact repository: ${what}, and the server downloads only from artifact repositories`;
}

function inputsOf(wf: Workflow, node: string): Artifact[] {
  const n = Object.values(wf.status?.nodes ?? {}).find((x) => x.id === node || x.name === node || x.displayName === node);
  if (!n) throw new OperationRefused('not-found', `workflow ${wf.metadata.namespace}/${wf.metadata.name} has no node "${node}"`);
  return n.inputs?.artifacts ?? [];
}

/**
 * The node's input artifact `name` when it is in a store (then the caller still runs the trust
 * check); refused, saying why, when the node has no such input or it is not in a store. Pure.
 */
export function storedInputArtifact(wf: Workflow, node: string, name: string): Artifact {
  const a = inputsOf(wf, node).find((x) => x.name === name);
  if (!a)
    throw new OperationRefused(
      'not-found',
      `workflow ${wf.metadata.namespace}/${wf.metadata.name} has no input artifact "${name}" on node "${node}"`,
    );
  const { from, stored } = sourceOf(a);
  if (!stored) throw new OperationRefused('forbidden', notStoredReason(a, from));
  return a;
}

/** Every input artifact of the node as the caller may download it or not, with the reason (the same checks as the download). */
export async function describeInputArtifacts(
  client: KubeClient,
  namespace: string,
  workflow: string,
  node: string,
  trust: ArtifactTrust = {},
): Promise<InputArtifactView[]> {
  const wf = inflateWorkflow(await client.get<Workflow>(WORKFLOWS, namespace, workflow));
  const inputs = inputsOf(wf, node);
  const origins = inputs.some((a) => sourceOf(a).stored) ? await trustedOrigins(client, wf, trust) : new Set<string>();
  return inputs.map((a) => {
    const { from, stored } = sourceOf(a);
    const base = { name: a.name, ...(a.path ? { path: a.path } : {}), from };
    if (!stored) return { ...base, downloadable: false, reason: notStoredReason(a, from) };
    const gone = collectedBy(wf, a);
    if (gone) return { ...base, downloadable: false, reason: `it was deleted by artifactGC (${gone})` };
    try {
      checkTrusted(a, origins, `workflow ${namespace}/${workflow}`);
      return { ...base, downloadable: true };
    } catch (err) {
      return { ...base, downloadable: false, reason: (err as Error).message };
    }
  });
}
