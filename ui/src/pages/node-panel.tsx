/**
 * The selected node: phase, message, times, inputs and outputs (artifacts downloadable: inputs
 * only from an artifact repository, input-artifacts.tsx), "Retry from here" in a failed
 * workflow (retry-node.tsx), and for a node with a pod, its containers' logs streamed live
 * (follow keeps the newest line in view).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, explain, stream } from '../api.js';
import { Cli, ErrorBox, PhaseBadge } from '../components.js';
import { elapsed } from '../format.js';
import { EventsTable } from '../events-table.js';
import { logSource } from '../log-source.js';
import { valueText, type IO, type NodeStatus, type Workflow } from '../types.js';
import { useNow, youngest } from '../use-now.js';
import { Download } from './download.js';
import { InputArtifacts } from './input-artifacts.js';
import { RetryNode } from './retry-node.js';

/** Lines kept in view; older ones are dropped (the CLI has the whole log). */
const MAX_LINES = 5000;

/** `archived`: the uid of an archived workflow — no retry, no events, its log and artifacts from the archive's routes. */
export function NodePanel({ wf, node, onClose, archived }: { wf: Workflow; node: NodeStatus; onClose: () => void; archived?: string }) {
  const { namespace, name } = wf.metadata;
  const source = logSource(wf, node);
  const now = useNow(node.finishedAt ? undefined : youngest([node.startedAt]));
  return (
    <aside class="panel" aria-label={`Node ${node.displayName}`}>
      <div class="title-row">
        <h2>{node.displayName}</h2>
        <button type="button" class="small" onClick={onClose} aria-label="Close the node panel">
          ✕
        </button>
      </div>
      <dl class="facts">
        <dt>Phase</dt>
        <dd>
          <PhaseBadge phase={node.phase} />
        </dd>
        {node.message ? (
          <>
            <dt>Message</dt>
            <dd class="message">{node.message}</dd>
          </>
        ) : null}
        <dt>Type</dt>
        <dd>{node.type}</dd>
        {node.templateName ? (
          <>
            <dt>Template</dt>
            <dd>{node.templateName}</dd>
          </>
        ) : null}
        <dt>Started</dt>
        <dd>{node.startedAt ?? '—'}</dd>
        <dt>Duration</dt>
        <dd>{elapsed(node.startedAt, node.finishedAt, now) || '—'}</dd>
        {node.podName ? (
          <>
            <dt>Pod</dt>
            <dd>
              <code>{node.podName}</code>
              {node.hostNodeName ? ` on ${node.hostNodeName}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      {archived ? null : <RetryNode key={node.id} wf={wf} node={node} />}
      <IOTable title="Inputs" io={node.inputs} inputsOf={archived ? undefined : { wf, node }} />
      <IOTable title="Outputs" io={node.outputs} wf={wf} node={node} archived={archived} />
      {archived && node.podName ? <ArchivedLog uid={archived} node={node} /> : null}
      {!archived && source ? <Logs namespace={namespace} workflow={name} pod={source.pod} containers={source.containers} /> : null}
      {!archived && source ? <EventsTable namespace={namespace} workflow={name} pod={source.pod} version={node.phase} /> : null}
    </aside>
  );
}

/** `wf` and `node` give outputs a Download button; `inputsOf` lists input artifacts with theirs (input-artifacts.tsx). */
function IOTable(props: {
  title: string;
  io?: IO;
  wf?: Workflow;
  node?: NodeStatus;
  inputsOf?: { wf: Workflow; node: NodeStatus };
  archived?: string;
}) {
  const { title, io, wf, node, inputsOf, archived } = props;
  const params = io?.parameters ?? [];
  const given = io?.artifacts ?? [];
  const artifacts = inputsOf ? [] : given;
  const rows: [string, string][] = params.map((p) => [p.name, valueText(p.value)]);
  if (io?.result !== undefined) rows.push(['result', io.result]);
  if (io?.exitCode !== undefined) rows.push(['exit code', io.exitCode]);
  if (rows.length === 0 && given.length === 0) return null;
  return (
    <section>
      <h3>{title}</h3>
      {rows.length > 0 ? (
        <table class="io">
          <tbody>
            {rows.map(([k, v]) => (
              <tr>
                <th scope="row">{k}</th>
                <td>
                  <code>{v}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {artifacts.length > 0 ? (
        <ul class="artifacts">
          {artifacts.map((a) => (
            <li>
              {a.name}
              {a.path ? <code> {a.path}</code> : null}
              {wf && node ? <Download wf={wf} node={node} artifact={a.name} side="outputs" archived={archived} /> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {inputsOf && given.length > 0 ? <InputArtifacts wf={inputsOf.wf} node={inputsOf.node} /> : null}
    </section>
  );
}

function Logs({ namespace, workflow, pod, containers }: { namespace: string; workflow: string; pod: string; containers: string[] }) {
  const [container, setContainer] = useState(containers[0]);
  useEffect(() => setContainer(containers[0]), [pod, containers[0]]);
  const [follow, setFollow] = useState(true);
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const [ended, setEnded] = useState(false);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    const got: string[] = [];
    let frame = 0;
    setLines([]);
    setError(undefined);
    setEnded(false);
    const path = `/api/v1/workflows/${enc(namespace)}/${enc(workflow)}/log?podName=${enc(pod)}&logOptions.container=${enc(container)}&logOptions.follow=true`;
    stream(
      path,
      (r) => {
        got.push((r as { content: string }).content);
        if (got.length > MAX_LINES) got.splice(0, got.length - MAX_LINES);
        if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setLines([...got])));
      },
      abort.signal,
    ).then(
      () => setEnded(true),
      (err: unknown) => {
        if (!abort.signal.aborted) setError(explain(err));
      },
    );
    return () => {
      abort.abort();
      cancelAnimationFrame(frame);
    };
  }, [namespace, workflow, pod, container]);
  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);
  return (
    <section class="logs">
      <div class="title-row">
        <h3>Logs</h3>
        <label>
          Container{' '}
          <select value={container} onChange={(e) => setContainer((e.target as HTMLSelectElement).value)}>
            {containers.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
        </label>
      </div>
      <ErrorBox error={error} />
      <pre ref={box} class="log" tabIndex={0} aria-label={`Log of ${pod}, container ${container}`} aria-live="off">
        {lines.join('\n')}
        {ended ? '\n— end of log —' : ''}
      </pre>
      <Cli command={`plugflow logs ${workflow} -n ${namespace}${follow ? ' -f' : ''}`} />
    </section>
  );
}

/** An archived node's log: its main container's, as saved to the artifact repository (archiveLogs). */
function ArchivedLog({ uid, node }: { uid: string; node: NodeStatus }) {
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    const abort = new AbortController();
    const got: string[] = [];
    setLines([]);
    setError(undefined);
    setEnded(false);
    stream(
      `/api/v1/archived-workflows/${enc(uid)}/log?nodeId=${enc(node.id)}`,
      (r) => {
        got.push((r as { content: string }).content);
        if (got.length > MAX_LINES) got.splice(0, got.length - MAX_LINES);
      },
      abort.signal,
    ).then(
      () => (setLines([...got]), setEnded(true)),
      (err: unknown) => {
        if (!abort.signal.aborted) setError(explain(err));
      },
    );
    return () => abort.abort();
  }, [uid, node.id]);
  return (
    <section class="logs">
      <h3>Log (archived)</h3>
      <ErrorBox error={error} />
      <pre class="log" tabIndex={0} aria-label={`Archived log of ${node.displayName}`}>
        {lines.join('\n')}
        {ended ? '\n— end of log —' : ''}
      </pre>
    </section>
  );
}
