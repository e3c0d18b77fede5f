/**
 * A node's input artifacts in its panel: each with a Download button when the server would fetch
 * it (from an artifact repository's store), or with the reason it will not — the step fetched it
 * itself (http, git), its data is in the workflow (raw), or its store is not an artifact
 * repository (src/operations/input-artifacts.ts asks the same trust check as the download).
 */
import { enc } from '../api.js';
import { ErrorBox } from '../components.js';
import type { NodeStatus, Workflow } from '../types.js';
import { useGet } from '../use-get.js';
import { Download } from './download.js';

interface InputArtifact {
  name: string;
  path?: string;
  from: string;
  downloadable: boolean;
  reason?: string;
}

export function InputArtifacts({ wf, node }: { wf: Workflow; node: NodeStatus }) {
  const { namespace, name } = wf.metadata;
  const got = useGet<{ artifacts: InputArtifact[] }>(
    `/api/v1/workflows/${enc(namespace)}/${enc(name)}/input-artifacts/${enc(node.id)}`,
    node.phase,
  );
  const given = node.inputs?.artifacts ?? [];
  const known = new Map((got.data?.artifacts ?? []).map((a) => [a.name, a]));
  return (
    <>
      <h4>Input artifacts</h4>
      <ErrorBox error={got.error} />
      <ul class="artifacts inputs">
        {given.map((a) => {
          const k = known.get(a.name);
          return (
            <li data-artifact={a.name}>
              {a.name}
              {a.path ? <code> {a.path}</code> : null}
              {k ? <span class="from"> from {k.from}</span> : null}
              {k?.downloadable ? <Download wf={wf} node={node} artifact={a.name} side="inputs" /> : null}
              {k && !k.downloadable ? (
                <p class="hint not-downloadable" role="note">
                  Not downloadable: {k.reason}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
    </>
  );
}
