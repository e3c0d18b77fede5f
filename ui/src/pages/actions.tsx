/**
 * The operations of one workflow (the REST API's PUT …/{retry,resubmit,stop,terminate,suspend,
 * resume} and DELETE), each disabled with the reason when the user may not do it or the
 * workflow's state does not allow it.
 */
import { useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';
import type { Operation } from '../access.js';
import { ErrorBox, Unavailable } from '../components.js';
import { go } from '../router.js';
import type { Workflow } from '../types.js';
import { refusal, useAccess } from '../use-access.js';
import { ResubmitForm } from './resubmit-form.js';

export interface Action {
  id: Operation;
  label: string;
  /** Why the state does not allow it now. */
  unless?: string;
  confirm?: string;
}

export function actionsFor(wf: Workflow): Action[] {
  const phase = wf.status?.phase ?? '';
  const finished = phase === 'Succeeded' || phase === 'Failed' || phase === 'Error';
  const suspended =
    wf.spec?.suspend === true || Object.values(wf.status?.nodes ?? {}).some((n) => n.type === 'Suspend' && n.phase === 'Running');
  return [
    {
      id: 'retry',
      label: 'Retry',
      unless: phase === 'Failed' || phase === 'Error' ? undefined : 'only a Failed or Error workflow can be retried',
    },
    { id: 'resubmit', label: 'Resubmit' },
    { id: 'suspend', label: 'Suspend', unless: finished ? 'it has finished' : wf.spec?.suspend ? 'it is suspended' : undefined },
    { id: 'resume', label: 'Resume', unless: finished ? 'it has finished' : suspended ? undefined : 'nothing is suspended' },
    {
      id: 'stop',
      label: 'Stop',
      unless: finished ? 'it has finished' : undefined,
      // What the engine does (src/engine/reconcile.ts, leaf-deadline.ts): a shutdown ends running
      // steps at once and starts none; only Stop then runs the exit handlers.
      confirm: 'Stop this workflow? Running steps are stopped and no new steps start; exit handlers run.',
    },
    {
      id: 'terminate',
      label: 'Terminate',
      unless: finished ? 'it has finished' : undefined,
      confirm: 'Terminate this workflow? Running steps are stopped and no new steps start; exit handlers do not run.',
    },
    { id: 'delete', label: 'Delete', confirm: 'Delete this workflow and its pods?' },
  ];
}

export function Actions({ wf }: { wf: Workflow }) {
  const { namespace, name } = wf.metadata;
  const access = useAccess(namespace);
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const [resubmitting, setResubmitting] = useState(false);
  const run = async (a: Action) => {
    // Resubmit opens its form, with the arguments to change (resubmit-form.tsx).
    if (a.id === 'resubmit') return setResubmitting(!resubmitting);
    if (a.confirm && !confirm(a.confirm)) return;
    setBusy(a.id);
    setError(undefined);
    setDone(undefined);
    const base = `/api/v1/workflows/${enc(namespace)}/${enc(name)}`;
    try {
      if (a.id === 'delete') {
        await call('DELETE', base);
        go(['workflows']);
        return;
      }
      await call<Workflow>('PUT', `${base}/${a.id}`, {});
      setDone(`${a.label}: done`);
    } catch (err) {
      setError(`${a.label} failed: ${explain(err)}`);
    } finally {
      setBusy(undefined);
    }
  };
  const actions = actionsFor(wf).map((a) => ({ ...a, why: refusal(access, a.id, a.unless) }));
  const unavailable = actions.filter((a) => a.why);
  return (
    <>
      <div class="actions" role="toolbar" aria-label="Workflow actions">
        {actions.map((a) => (
          <button
            type="button"
            class={a.id === 'delete' || a.id === 'terminate' ? 'danger' : ''}
            disabled={!!a.why || !!busy}
            title={a.why}
            data-action={a.id}
            aria-expanded={a.id === 'resubmit' ? resubmitting : undefined}
            onClick={() => void run(a)}
          >
            {busy === a.id ? `${a.label}…` : a.label}
          </button>
        ))}
        <Unavailable reasons={unavailable.map((a) => [a.label, a.why!])} />
        <ErrorBox error={error} />
        {done ? (
          <span class="done" role="status">
            {done}
          </span>
        ) : null}
      </div>
      {resubmitting ? <ResubmitForm wf={wf} onClose={() => setResubmitting(false)} /> : null}
    </>
  );
}
