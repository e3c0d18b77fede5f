/** One workflow, live: its actions, its graph, summary, logs, timeline, events or JSON, and the selected node's panel. */
import { enc } from '../api.js';
import { Cli, ErrorBox, PhaseBadge } from '../components.js';
import { elapsed } from '../format.js';
import { useNow, youngest } from '../use-now.js';
import { progressOf, timesOf } from '../workflow-status.js';
import { GraphView } from '../graph/graph-view.js';
import { useLiveWorkflows } from '../live.js';
import { go } from '../router.js';
import { ViewTabs } from './view-tabs.js';
import { Actions } from './actions.js';
import { NodePanel } from './node-panel.js';
import { Timeline } from './timeline.js';
import { EventsTable } from '../events-table.js';
import { WorkflowSummary } from './summary.js';
import { WorkflowLogs } from './workflow-logs.js';

const TABS: [string, string][] = [
  ['graph', 'Graph'],
  ['summary', 'Summary'],
  ['logs', 'Logs'],
  ['timeline', 'Timeline'],
  ['events', 'Events'],
  ['json', 'JSON'],
];

export function WorkflowPage({ namespace, name, selected, tab }: { namespace: string; name: string; selected?: string; tab: string }) {
  const live = useLiveWorkflows(`/api/v1/workflow-events/${enc(namespace)}?listOptions.fieldSelector=${enc(`metadata.name=${name}`)}`);
  const wf = live.workflows.get(`${namespace}/${name}`);
  const select = (node?: string) => go(['workflows', namespace, name], { tab, node });
  const times: ReturnType<typeof timesOf> = wf ? timesOf(wf) : {};
  const now = useNow(times.finishedAt ? undefined : youngest([times.startedAt]));
  if (!wf) {
    return (
      <section>
        <h1>{name}</h1>
        <ErrorBox error={live.error} />
        <p class={live.loaded ? 'empty' : 'loading'}>
          {live.loaded ? `Workflow ${namespace}/${name} does not exist (or was deleted).` : 'Loading…'}
        </p>
      </section>
    );
  }
  const st = wf.status ?? {};
  const nodes = st.nodes ?? {};
  const node = selected ? nodes[selected] : undefined;
  return (
    <section class={`workflow${node ? ' with-panel' : ''}`} aria-labelledby="wf-title">
      <div class="title-row">
        <h1 id="wf-title">
          {name} <PhaseBadge phase={st.phase} />
        </h1>
        <span class="meta">
          {namespace} · {progressOf(wf)} · {elapsed(times.startedAt, times.finishedAt, now)}
        </span>
      </div>
      {st.message ? <p class="message">{st.message}</p> : null}
      <ErrorBox error={live.error} />
      <Actions wf={wf} />
      <ViewTabs tabs={TABS} path={['workflows', namespace, name]} tab={tab} node={selected} />
      <div class="workflow-body">
        <div class="workflow-main">
          {tab === 'summary' ? (
            <WorkflowSummary wf={wf} />
          ) : tab === 'logs' ? (
            <WorkflowLogs wf={wf} />
          ) : tab === 'timeline' ? (
            <Timeline wf={wf} onSelect={select} />
          ) : tab === 'events' ? (
            <EventsTable namespace={namespace} workflow={name} version={st.phase} />
          ) : tab === 'json' ? (
            <pre class="json" tabIndex={0}>
              {JSON.stringify(wf, null, 2)}
            </pre>
          ) : (
            <GraphView nodes={nodes} version={wf.metadata.resourceVersion ?? ''} selected={selected} onSelect={select} />
          )}
        </div>
        {node ? <NodePanel wf={wf} node={node} onClose={() => select(undefined)} /> : null}
      </div>
      <Cli command={`plugflow get ${name} -n ${namespace}`} />
    </section>
  );
}
