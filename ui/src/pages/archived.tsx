/**
 * The workflow archive in the UI (when the server has one: GET /api/v1/archived-workflows answers):
 * under the live list, the archived workflows of the namespace with a badge, newest finished
 * first, by page; and one archived workflow opened as a live one is — its graph, summary, node
 * panel and JSON — read from the archive with the caller's rights.
 */
import { useState } from 'preact/hooks';
import { enc } from '../api.js';
import { Cli, ErrorBox, PhaseBadge, nsFlag } from '../components.js';
import { ago, elapsed } from '../format.js';
import { GraphView } from '../graph/graph-view.js';
import { go, href } from '../router.js';
import { ViewTabs } from './view-tabs.js';
import type { ArchivePage, Workflow } from '../types.js';
import { useGet } from '../use-get.js';
import { progressOf } from '../workflow-status.js';
import { NodePanel } from './node-panel.js';
import { WorkflowSummary } from './summary.js';

/** The archive's part of the workflow list; nothing when the server has no archive. */
export function ArchivedSection({ namespace, phase, labels }: { namespace: string; phase: string; labels: string }) {
  const [cursor, setCursor] = useState<string>();
  const q = new URLSearchParams({ 'listOptions.limit': '50', count: 'true' });
  if (namespace) q.set('namespace', namespace);
  if (phase && ['Succeeded', 'Failed', 'Error'].includes(phase)) q.set('phase', phase);
  if (labels) q.set('listOptions.labelSelector', labels);
  if (cursor) q.set('listOptions.continue', cursor);
  const got = useGet<{ items: ArchivePage['items']; metadata: { continue?: string; count?: number } }>(
    `/api/v1/archived-workflows?${q.toString()}`,
  );
  // No archive on this server (404), or — over all namespaces — a caller without the right to
  // list cluster-wide: the live list is the page.
  if (got.error && (/no such endpoint|not found|404/i.test(got.error) || (!namespace && /forbidden|403|may not/i.test(got.error))))
    return null;
  const now = Date.now();
  return (
    <section class="archived" aria-labelledby="archived-title">
      <h2 id="archived-title">Archived{got.data?.metadata.count !== undefined ? ` (${got.data.metadata.count})` : ''}</h2>
      <ErrorBox error={got.error} />
      {got.data && got.data.items.length === 0 ? <p class="empty">No archived workflows match.</p> : null}
      <table class="list">
        <tbody>
          {got.data?.items.map((w) => (
            <tr data-uid={w.uid}>
              <td>
                <a href={href(['archived', w.uid])}>{w.name}</a> <span class="badge archived-badge">archived</span>
              </td>
              <td>{w.namespace}</td>
              <td>
                <PhaseBadge phase={w.phase as never} />
              </td>
              <td title={w.finishedAt}>finished {ago(w.finishedAt, now)}</td>
              <td>{elapsed(w.startedAt, w.finishedAt, now)}</td>
              <td>{w.message ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {got.data?.metadata.continue ? (
        <button type="button" class="small" onClick={() => setCursor(got.data!.metadata.continue)}>
          Older
        </button>
      ) : null}
      <Cli command={`plugflow archive list${nsFlag(namespace)}${labels ? ` -l '${labels}'` : ''}`} />
    </section>
  );
}

const TABS: [string, string][] = [
  ['graph', 'Graph'],
  ['summary', 'Summary'],
  ['json', 'JSON'],
];

/** One archived workflow, as it finished. */
export function ArchivedPage({ uid, selected, tab }: { uid: string; selected?: string; tab: string }) {
  const got = useGet<Workflow>(`/api/v1/archived-workflows/${enc(uid)}`);
  const wf = got.data;
  if (!wf)
    return (
      <section>
        <h1>Archived workflow</h1>
        <ErrorBox error={got.error} />
        {got.error ? null : <p class="loading">Loading…</p>}
      </section>
    );
  const st = wf.status ?? {};
  const nodes = st.nodes ?? {};
  const node = selected ? nodes[selected] : undefined;
  const select = (n?: string) => go(['archived', uid], { tab, node: n });
  return (
    <section class={`workflow${node ? ' with-panel' : ''}`} aria-labelledby="wf-title">
      <div class="title-row">
        <h1 id="wf-title">
          {wf.metadata.name} <PhaseBadge phase={st.phase} /> <span class="badge archived-badge">archived</span>
        </h1>
        <span class="meta">
          {wf.metadata.namespace} · {progressOf(wf)} · {elapsed(st.startedAt, st.finishedAt, Date.now())}
        </span>
      </div>
      {st.message ? <p class="message">{st.message}</p> : null}
      <ViewTabs tabs={TABS} path={['archived', uid]} tab={tab} node={selected} />
      <div class="workflow-body">
        <div class="workflow-main">
          {tab === 'summary' ? (
            <WorkflowSummary wf={wf} />
          ) : tab === 'json' ? (
            <pre class="json" tabIndex={0}>
              {JSON.stringify(wf, null, 2)}
            </pre>
          ) : (
            <GraphView nodes={nodes} version={uid} selected={selected} onSelect={select} />
          )}
        </div>
        {node ? <NodePanel wf={wf} node={node} onClose={() => select(undefined)} archived={uid} /> : null}
      </div>
      <Cli command={`plugflow archive get ${uid}`} />
    </section>
  );
}
