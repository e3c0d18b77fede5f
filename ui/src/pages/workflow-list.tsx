/**
 * Workflows across namespaces (or one), live: filter by phase, label selector and name, sort by
 * any column. Rows are virtual (only those on screen are in the DOM), so thousands of workflows
 * scroll smoothly. The label selector goes to the server (it filters the watch); the rest is
 * filtered here. Rows can be selected (one by one, or all shown) for batch actions (batch-actions.tsx).
 */
import { useMemo, useState } from 'preact/hooks';
import { ArchivedSection } from './archived.js';
import { enc } from '../api.js';
import { Cli, ErrorBox, PhaseBadge, nsFlag } from '../components.js';
import { ago, elapsed } from '../format.js';
import { filterAndSort, visibleRange, type SortKey } from '../list-model.js';
import { useLiveWorkflows } from '../live.js';
import { useNow, youngest } from '../use-now.js';
import { progressOf, timesOf } from '../workflow-status.js';
import { go, href, replace } from '../router.js';
import { keyOf } from '../batch.js';
import { BatchActions } from './batch-actions.js';

const ROW = 34;
const PHASES = ['', 'Pending', 'Running', 'Succeeded', 'Failed', 'Error'];
const COLUMNS: [SortKey, string][] = [
  ['name', 'Name'],
  ['namespace', 'Namespace'],
  ['phase', 'Phase'],
  ['created', 'Created'],
  ['duration', 'Duration'],
];

export function WorkflowList({ namespace, query }: { namespace: string; query: URLSearchParams }) {
  const phase = query.get('phase') ?? '';
  const labels = query.get('labels') ?? '';
  const name = query.get('name') ?? '';
  const sort = (query.get('sort') as SortKey | null) ?? 'created';
  const descending = (query.get('dir') ?? (sort === 'created' || sort === 'duration' ? 'desc' : 'asc')) === 'desc';
  /** A new filter; `inPlace` while it is being typed (no history entry per keystroke). */
  const set = (k: string, v: string, inPlace = false) => {
    const next = Object.fromEntries(query.entries());
    next[k] = v;
    (inPlace ? replace : go)(['workflows'], next);
  };
  const path = `/api/v1/workflow-events/${namespace ? enc(namespace) : ''}?summary=true${labels ? `&listOptions.labelSelector=${enc(labels)}` : ''}`;
  const live = useLiveWorkflows(path);
  const rows = useMemo(
    () => filterAndSort(live.workflows.values(), { phase, name, sort, descending }),
    [live.version, live.workflows, phase, name, sort, descending],
  );
  // The selection for batch actions (batch-actions.tsx), by `namespace/name`.
  const [picked, setPicked] = useState<ReadonlySet<string>>(() => new Set());
  const selected = rows.filter((wf) => picked.has(keyOf(wf)));
  const allPicked = rows.length > 0 && selected.length === rows.length;
  const pick = (key: string, on: boolean) => {
    const next = new Set(picked);
    if (on) next.add(key);
    else next.delete(key);
    setPicked(next);
  };
  const [scrollTop, setScrollTop] = useState(0);
  const viewHeight = Math.max(300, window.innerHeight - 230);
  const [first, last] = visibleRange(scrollTop, viewHeight, ROW, rows.length);
  const shown = rows.slice(first, last);
  // The youngest time on screen sets the clock: a creation time, or the start of a running one.
  const now = useNow(
    youngest(shown.flatMap((wf) => [wf.metadata.creationTimestamp, wf.status?.finishedAt ? undefined : wf.status?.startedAt])),
  );

  return (
    <section aria-labelledby="list-title">
      <div class="title-row">
        <h1 id="list-title">Workflows{namespace ? ` in ${namespace}` : ''}</h1>
        <a class="button" href={href(['submit'])}>
          Submit
        </a>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Phase{' '}
          <select value={phase} onChange={(e) => set('phase', (e.target as HTMLSelectElement).value)}>
            {PHASES.map((p) => (
              <option value={p}>{p || 'any'}</option>
            ))}
          </select>
        </label>
        <label>
          Name contains <input value={name} onInput={(e) => set('name', (e.target as HTMLInputElement).value, true)} size={14} />
        </label>
        <label>
          Labels{' '}
          <input
            value={labels}
            placeholder="app=x,tier!=y"
            onChange={(e) => set('labels', (e.target as HTMLInputElement).value.trim())}
            size={18}
          />
        </label>
        <span class="count" aria-live="polite">
          {live.loaded ? `${rows.length} of ${live.workflows.size}` : 'loading…'}
        </span>
      </form>
      <ErrorBox
        error={
          // The hint is for a refusal to list every namespace, not for a server that is down.
          live.error && !namespace && !live.down
            ? `${live.error}. To see one namespace, type it in the Namespace box at the top.`
            : live.error
        }
      />
      {live.polling ? (
        <p class="hint polling" role="status">
          {live.polling}
        </p>
      ) : null}
      <BatchActions
        selected={selected}
        onClear={() => setPicked(new Set())}
        onDeleted={(keys) => setPicked(new Set([...picked].filter((k) => !keys.includes(k))))}
      />
      <div class="table selectable" role="table" aria-label="Workflows" aria-rowcount={rows.length + 1}>
        <div class="row head" role="row">
          <span class="cell col-pick" role="columnheader">
            <input
              type="checkbox"
              class="pick-all"
              checked={allPicked}
              ref={(e) => {
                if (e) e.indeterminate = selected.length > 0 && !allPicked;
              }}
              aria-label={`Select all ${rows.length} shown workflows`}
              onChange={(e) => setPicked(new Set((e.target as HTMLInputElement).checked ? rows.map(keyOf) : []))}
            />
          </span>
          {COLUMNS.map(([key, label]) => (
            <button
              type="button"
              role="columnheader"
              class={`cell col-${key}`}
              aria-sort={sort === key ? (descending ? 'descending' : 'ascending') : 'none'}
              onClick={() =>
                go(['workflows'], { ...Object.fromEntries(query.entries()), sort: key, dir: sort === key && !descending ? 'desc' : 'asc' })
              }
            >
              {label}
              {sort === key ? (descending ? ' ▼' : ' ▲') : ''}
            </button>
          ))}
          <span class="cell col-progress" role="columnheader">
            Progress
          </span>
          <span class="cell col-message" role="columnheader">
            Message
          </span>
        </div>
        <div class="rows" style={{ height: `${viewHeight}px` }} onScroll={(e) => setScrollTop((e.target as HTMLElement).scrollTop)}>
          <div style={{ height: `${rows.length * ROW}px`, position: 'relative' }}>
            {shown.map((wf, i) => {
              const md = wf.metadata;
              const st = wf.status ?? {};
              const times = timesOf(wf);
              const key = keyOf(wf);
              return [
                <label class="pick" style={{ top: `${(first + i) * ROW}px` }} key={`pick:${key}`}>
                  <input
                    type="checkbox"
                    checked={picked.has(key)}
                    aria-label={`Select ${key}`}
                    onChange={(e) => pick(key, (e.target as HTMLInputElement).checked)}
                  />
                </label>,
                <a
                  class="row"
                  role="row"
                  aria-rowindex={first + i + 2}
                  style={{ top: `${(first + i) * ROW}px` }}
                  href={href(['workflows', md.namespace, md.name])}
                  key={key}
                >
                  <span class="cell col-name" role="cell">
                    {md.name}
                  </span>
                  <span class="cell col-namespace" role="cell">
                    {md.namespace}
                  </span>
                  <span class="cell col-phase" role="cell">
                    <PhaseBadge phase={st.phase} />
                  </span>
                  <span class="cell col-created" role="cell" title={md.creationTimestamp}>
                    {ago(md.creationTimestamp, now)}
                  </span>
                  <span class="cell col-duration" role="cell">
                    {elapsed(times.startedAt, times.finishedAt, now)}
                  </span>
                  <span class="cell col-progress" role="cell">
                    {progressOf(wf)}
                  </span>
                  <span class="cell col-message" role="cell" title={st.message}>
                    {st.message ?? ''}
                  </span>
                </a>,
              ];
            })}
          </div>
        </div>
        {live.loaded && rows.length === 0 ? <p class="empty">No workflows{live.workflows.size ? ' match the filters' : ' yet'}.</p> : null}
      </div>
      <Cli command={`plugflow list${nsFlag(namespace)}${labels ? ` -l '${labels}'` : ''}`} />
      <ArchivedSection namespace={namespace} phase={phase} labels={labels} />
    </section>
  );
}
