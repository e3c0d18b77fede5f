/** The workflow's summary tab: who submitted it, from which template, its arguments, labels and annotations. */
import { Cli } from '../components.js';
import type { Workflow } from '../types.js';
import { summaryOf } from '../workflow-summary.js';

function Pairs({ title, rows, sep, empty }: { title: string; rows: [string, string][]; sep: string; empty: string }) {
  return (
    <section class={`summary-${title.toLowerCase()}`}>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <ul class="pairs">
          {rows.map(([k, v]) => (
            <li>
              <code class="key">{k}</code>
              <span class="sep">{sep}</span>
              <code class="value">{v}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function WorkflowSummary({ wf }: { wf: Workflow }) {
  const s = summaryOf(wf);
  const { namespace, name } = wf.metadata;
  return (
    <div class="summary" aria-label="Summary">
      <dl class="facts">
        <dt>Submitted by</dt>
        <dd class="creator">{s.creator ?? 'not recorded'}</dd>
        <dt>Created</dt>
        <dd>{wf.metadata.creationTimestamp ?? '—'}</dd>
        {s.template ? (
          <>
            <dt>From</dt>
            <dd>{s.template}</dd>
          </>
        ) : null}
      </dl>
      <Pairs title="Parameters" rows={s.parameters} sep=" = " empty="No parameters." />
      <Pairs title="Labels" rows={s.labels} sep=": " empty="No labels." />
      <Pairs title="Annotations" rows={s.annotations} sep=": " empty="No annotations." />
      <Cli command={`plugflow get ${name} -n ${namespace} -o yaml`} />
    </div>
  );
}
