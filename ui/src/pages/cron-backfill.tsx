/**
 * A CronWorkflow's backfills: the form that asks for one (POST …/backfill, with the user's token)
 * and the progress of each, as the controller reports it in status.backfills. The range is typed
 * in the browser's time zone and sent in UTC; the server answers how many runs start.
 */
import { useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';

export interface BackfillProgress {
  name: string;
  total: number;
  started: number;
  phase: string;
  next?: string;
  running?: string[];
  message?: string;
}

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** `2026-11-01T06:00` in the browser's zone, as RFC 3339 in UTC; undefined when not a time. */
function utc(local: string): string | undefined {
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

export function BackfillForm(props: { namespace: string; name: string; why?: string; onDone: () => void }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [parallel, setParallel] = useState('1');
  const [answer, setAnswer] = useState<string>();
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setAnswer(undefined);
    setError(undefined);
    const range = { from: utc(from), to: utc(to) };
    if (!range.from || !range.to) return setError('Give both ends of the range.');
    try {
      const a = await call<{ message: string }>('POST', `/api/v1/cron-workflows/${enc(props.namespace)}/${enc(props.name)}/backfill`, {
        ...range,
        parallel: Number(parallel),
      });
      setAnswer(a.message);
      props.onDone();
    } catch (err) {
      setError(explain(err));
    }
  };
  return (
    <form class="backfill-form" onSubmit={(e) => void submit(e)}>
      <label>
        From <input type="datetime-local" step="1" name="from" required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      </label>{' '}
      <label>
        to <input type="datetime-local" step="1" name="to" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      </label>{' '}
      <span class="hint">({zone})</span>{' '}
      <label>
        at once{' '}
        <input type="number" name="parallel" min="1" max="100" value={parallel} onInput={(e) => setParallel(e.currentTarget.value)} />
      </label>{' '}
      <button type="submit" class="small" disabled={!!props.why} title={props.why}>
        Backfill
      </button>
      {props.why ? <p class="refusal">{props.why}</p> : null}
      {answer ? <p class="answer">{answer}</p> : null}
      {error ? <p class="error">{error}</p> : null}
    </form>
  );
}

export function BackfillList({ backfills }: { backfills?: BackfillProgress[] }) {
  if (!backfills?.length) return null;
  return (
    <ul class="backfills">
      {backfills.map((b) => (
        <li data-backfill={b.name}>
          <code>{b.name}</code> {b.phase}: {b.started}/{b.total} started, {b.running?.length ?? 0} running
          {b.next ? `, next ${b.next}` : ''}
          {b.message ? ` (${b.message})` : ''}
        </li>
      ))}
    </ul>
  );
}
