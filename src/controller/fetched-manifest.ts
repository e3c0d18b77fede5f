/**
 * The text of a resource template's `manifestFrom.artifact`, as the node's manifest pod printed
 * it (src/engine/execute-resource.ts, `plugflow executor manifest`): whole from the pod's report
 * when it fit there, else from the log of the pod's main container, checked against the size
 * and the beginning the report gave — a rotated log or stray output fails the step instead of
 * applying something else.
 *
 * The log is read with the controller's own client: the pod is one the controller created for
 * this workflow, and its output is what the controller already reads from that pod's status;
 * the artifact itself was fetched inside the pod, with the step's credentials.
 */
import type { Template } from '../api/index.js';
import type { FetchedManifest } from '../engine/index.js';
import type { KubeClient } from '../kube/client.js';
import { MAIN_CONTAINER } from '../api/index.js';

/** How much of what follows the manifest in the log an error shows. */
const STRAY_BYTES_SHOWN = 200;

/** Why a manifest could not be read back from its pod. */
export class ManifestReadError extends Error {
  override readonly name = 'ManifestReadError';
}

export async function manifestText(
  client: Pick<KubeClient, 'podLog'>,
  namespace: string,
  m: FetchedManifest,
  signal?: AbortSignal,
): Promise<string> {
  if (m.whole) return m.text;
  const chunks: Buffer[] = [];
  let size = 0;
  // A little more than the manifest: what follows it, if anything, is named in the error.
  const limitBytes = m.bytes + STRAY_BYTES_SHOWN;
  for await (const chunk of await client.podLog(namespace, m.podName, { container: MAIN_CONTAINER, limitBytes }, signal)) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limitBytes) break;
  }
  const data = Buffer.concat(chunks);
  const where = `the log of pod ${namespace}/${m.podName}`;
  if (data.length < m.bytes)
    throw new ManifestReadError(
      `${where} holds only ${data.length} bytes of the ${m.bytes}-byte manifest the pod reported (was the log rotated?)`,
    );
  if (data.length > m.bytes) {
    const stray = data.subarray(m.bytes, m.bytes + STRAY_BYTES_SHOWN).toString('utf8');
    throw new ManifestReadError(`${where} goes on after the ${m.bytes}-byte manifest the pod reported: ${JSON.stringify(stray)}`);
  }
  const text = data.toString('utf8');
  if (!text.startsWith(m.text)) throw new ManifestReadError(`${where} does not begin with the manifest the pod reported`);
  return text;
}

/** The template with the fetched text as its `resource.manifest`. */
export function withManifest(template: Template, text: string): Template {
  const { manifestFrom: _from, ...resource } = template.resource!;
  return { ...template, resource: { ...resource, manifest: text } };
}
