/**
 * CronWorkflows of a namespace: schedule, suspended or not, last run; suspend and resume with the
 * user's rights, disabled with the reason when the token may not; edit one as YAML (yaml-editor.tsx);
 * backfill a past range and follow its progress (cron-backfill.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';
import { useGet } from '../use-get.js';
import { Cli, ErrorBox, Unavailable } from '../components.js';
import { ago } from '../format.js';
import { NeedNamespace } from '../need-namespace.js';
import { refusal, useAccess } from '../use-access.js';
import { useNow, youngest } from '../use-now.js';
import { YamlEditor } from './yaml-editor.js';
import { BackfillForm, BackfillList, type BackfillProgress } from './cron-backfill.js';

interface Cron {
  metadata: { name: string; resourceVersion?: string };
  spec?: { schedule?: string; schedules?: string[]; suspend?: boolean; timezone?: string; backfills?: { name: string }[] };
  status?: { lastScheduledTime?: string; active?: unknown[]; backfills?: BackfillProgress[] };
}

export function CronPage({ namespace }: { namespace: string }) {
  const got = useGet<{ items: Cron[] }>(namespace ? `/api/v1/cron-workflows/${enc(namespace)}` : undefined);
  const list = got.data?.items;
  const [actionError, setError] = useState<string>();
  const [editing, setEditing] = useState<string>();
  const [backfilling, setBackfilling] = useState<string>();
  const error = actionError ?? got.error;
  const access = useAccess(namespace);
  const now = useNow(youngest((list ?? []).map((c) => c.status?.lastScheduledTime)));
  // A backfill's progress is read again every 3 s until the controller reports every one ended.
  const phaseOf = (c: Cron, name: string) => (c.status?.backfills ?? []).find((s) => s.name === name)?.phase ?? 'Running';
  const backfillRunning = (list ?? []).some((c) => (c.spec?.backfills ?? []).some((b) => phaseOf(c, b.name) === 'Running'));
  useEffect(() => {
    if (!backfillRunning) return;
    const timer = setInterval(got.reload, 3000);
    return () => clearInterval(timer);
  }, [backfillRunning, got.reload]);
  if (!namespace) return <NeedNamespace what="CronWorkflows" />;
  const ops = {
    suspend: { label: 'Suspend', why: refusal(access, 'cronSuspend') },
    resume: { label: 'Resume', why: refusal(access, 'cronResume') },
  };
  const editWhy = refusal(access, 'cronUpdate');
  const backfillWhy = refusal(access, 'cronBackfill');
  const edited = list?.find((c) => c.metadata.name === editing);
  const refused = (['suspend', 'resume'] as const)
    .filter((op) => ops[op].why && list?.some((c) => !!c.spec?.suspend === (op === 'resume')))
    .map((op): [string, string] => [ops[op].label, ops[op].why!]);
  const toggle = async (c: Cron) => {
    try {
      await call('PUT', `/api/v1/cron-workflows/${enc(namespace)}/${enc(c.metadata.name)}/${c.spec?.suspend ? 'resume' : 'suspend'}`, {});
      got.reload();
    } catch (err) {
      setError(explain(err));
    }
  };
  return (
    <section>
      <h1>Cron workflows in {namespace}</h1>
      <ErrorBox error={error} />
      {list?.length === 0 ? <p class="empty">No CronWorkflows in {namespace}.</p> : null}
      {list && list.length > 0 ? (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Schedule</th>
              <th scope="col">Last run</th>
              <th scope="col">Active</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => (
              <tr data-cron={c.metadata.name}>
                <td>
                  <details>
                    <summary>{c.metadata.name}</summary>
                    <pre class="json">{JSON.stringify(c, null, 2)}</pre>
                  </details>
                </td>
                <td>
                  <code>{(c.spec?.schedules ?? [c.spec?.schedule ?? '']).join(', ')}</code>
                  {c.spec?.timezone ? ` (${c.spec.timezone})` : ''}
                </td>
                <td>{ago(c.status?.lastScheduledTime, now) || 'never'}</td>
                <td>{c.status?.active?.length ?? 0}</td>
                <td>
                  <button
                    type="button"
                    class="small"
                    data-action={c.spec?.suspend ? 'cron-resume' : 'cron-suspend'}
                    disabled={!!ops[c.spec?.suspend ? 'resume' : 'suspend'].why}
                    title={ops[c.spec?.suspend ? 'resume' : 'suspend'].why}
                    onClick={() => void toggle(c)}
                  >
                    {c.spec?.suspend ? 'Suspended: resume' : 'Active: suspend'}
                  </button>{' '}
                  <button
                    type="button"
                    class="small"
                    data-action="cron-edit"
                    aria-expanded={editing === c.metadata.name}
                    onClick={() => setEditing(editing === c.metadata.name ? undefined : c.metadata.name)}
                  >
                    Edit
                  </button>{' '}
                  <button
                    type="button"
                    class="small"
                    data-action="cron-backfill"
                    aria-expanded={backfilling === c.metadata.name}
                    onClick={() => setBackfilling(backfilling === c.metadata.name ? undefined : c.metadata.name)}
                  >
                    Backfill
                  </button>
                  {backfilling === c.metadata.name ? (
                    <BackfillForm namespace={namespace} name={c.metadata.name} why={backfillWhy} onDone={got.reload} />
                  ) : null}
                  <BackfillList backfills={c.status?.backfills} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {edited ? (
        <section class="edit-cron" aria-labelledby="edit-cron-title">
          <h2 id="edit-cron-title">Edit CronWorkflow {edited.metadata.name}</h2>
          <YamlEditor
            key={`${namespace}/${edited.metadata.name}`}
            title={`CronWorkflow ${edited.metadata.name}`}
            object={edited as unknown as Record<string, unknown>}
            path={`/api/v1/cron-workflows/${enc(namespace)}/${enc(edited.metadata.name)}`}
            bodyKey="cronWorkflow"
            why={editWhy}
            onSaved={got.reload}
          />
        </section>
      ) : null}
      <Unavailable reasons={refused} />
      <Cli command={`plugflow cron list -n ${namespace}`} />
    </section>
  );
}
