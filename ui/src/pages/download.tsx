/** Downloading a node's artifact: fetched with the token (a plain link would carry none) and saved from a blob. */
import { useState } from 'preact/hooks';
import { enc, explain, token } from '../api.js';
import { ErrorBox } from '../components.js';
import type { NodeStatus, Workflow } from '../types.js';

/**
 * The peer's paths: `/artifact-files/{ns}/workflows/{name}/{nodeId}/{outputs|inputs}/{artifact}`,
 * and for an archived workflow (by uid) `/artifact-files/{ns}/archived-workflows/{uid}/{nodeId}/outputs/{artifact}`.
 */
export function artifactPath(wf: Workflow, node: NodeStatus, side: 'outputs' | 'inputs', artifact: string, archived?: string): string {
  const owner = archived ? `archived-workflows/${enc(archived)}` : `workflows/${enc(wf.metadata.name)}`;
  return `/artifact-files/${enc(wf.metadata.namespace)}/${owner}/${enc(node.id)}/${side}/${enc(artifact)}`;
}

export function Download(props: { wf: Workflow; node: NodeStatus; artifact: string; side: 'outputs' | 'inputs'; archived?: string }) {
  const { wf, node, artifact, side, archived } = props;
  const [error, setError] = useState<string>();
  const save = async () => {
    setError(undefined);
    try {
      const res = await fetch(artifactPath(wf, node, side, artifact, archived), { headers: { authorization: `Bearer ${token()}` } });
      if (!res.ok) throw new Error(((await res.json().catch(() => ({}))) as { message?: string }).message ?? res.statusText);
      const disposition = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '');
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = disposition?.[1] ?? artifact;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(explain(err));
    }
  };
  return (
    <>
      {' '}
      <button type="button" class="small" data-download={`${side}/${artifact}`} onClick={() => void save()}>
        Download
      </button>
      <ErrorBox error={error} />
    </>
  );
}
