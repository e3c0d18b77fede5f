/**
 * The toolbar over the workflow list's selection: Stop, Terminate, Delete, Resubmit, Retry for
 * every selected workflow. Each is checked first as the single action is (batch.ts): one the
 * token may not act on in its namespace, or whose state does not allow it, is not sent and says
 * why; the rest are sent one after another, each reported ok or with the server's reason.
 */
import { useState } from 'preact/hooks';
import { call, explain } from '../api.js';
import { BATCH_ACTIONS, batchRefusal, keyOf, planBatch, requestOf, type BatchAction } from '../batch.js';
import { Unavailable } from '../components.js';
import type { Workflow } from '../types.js';
import { useAccessIn } from '../use-access.js';

interface Result {
  key: string;
  ok?: boolean;
  text: string;
}

export function BatchActions({
  selected,
  onClear,
  onDeleted,
}: {
  selected: Workflow[];
  onClear: () => void;
  onDeleted: (keys: string[]) => void;
}) {
  const access = useAccessIn(selected.map((wf) => wf.metadata.namespace));
  const [busy, setBusy] = useState<string>();
  const [results, setResults] = useState<{ label: string; lines: Result[] }>();
  const actions = BATCH_ACTIONS.map((a) => {
    const plans = planBatch(a.id, selected, access);
    return { ...a, plans, why: batchRefusal(plans) };
  });
  const run = async (a: BatchAction & { plans: ReturnType<typeof planBatch> }) => {
    const sendable = a.plans.filter((p) => !p.skip);
    if (a.confirm && !confirm(a.confirm(sendable.length))) return;
    setBusy(a.id);
    const lines: Result[] = a.plans.map((p) =>
      p.skip ? { key: keyOf(p.wf), ok: false, text: `not sent: ${p.skip}` } : { key: keyOf(p.wf), text: 'waiting…' },
    );
    const show = () => setResults({ label: a.label, lines: [...lines] });
    show();
    const deleted: string[] = [];
    for (const [i, p] of a.plans.entries()) {
      if (p.skip) continue;
      const { method, path } = requestOf(a.id, p.wf);
      try {
        const res = await call<Workflow>(method, path, method === 'PUT' ? {} : undefined);
        lines[i] = { key: lines[i]!.key, ok: true, text: a.id === 'resubmit' ? `ok: resubmitted as ${res.metadata.name}` : 'ok' };
        if (a.id === 'delete') deleted.push(lines[i]!.key);
      } catch (err) {
        lines[i] = { key: lines[i]!.key, ok: false, text: explain(err) };
      }
      show();
    }
    setBusy(undefined);
    if (deleted.length) onDeleted(deleted);
  };
  // The results stay after the selection is gone (deleted workflows leave the list).
  if (selected.length === 0 && !results) return null;
  return (
    <div class="batch">
      {selected.length === 0 ? null : (
        <div class="actions" role="toolbar" aria-label="Actions on the selected workflows">
          <span class="count">{selected.length} selected:</span>
          {actions.map((a) => (
            <button
              type="button"
              class={a.id === 'delete' || a.id === 'terminate' ? 'danger' : ''}
              disabled={!!a.why || !!busy}
              title={a.why}
              data-batch={a.id}
              onClick={() => void run(a)}
            >
              {busy === a.id ? `${a.label}…` : a.label}
            </button>
          ))}
          <button type="button" class="small" onClick={onClear} disabled={!!busy}>
            Clear the selection
          </button>
          <Unavailable reasons={actions.filter((a) => a.why).map((a) => [a.label, a.why!])} />
        </div>
      )}
      {results ? (
        <ul class="batch-results" aria-live="polite" aria-label={`${results.label}: one line per workflow`}>
          {results.lines.map((r) => (
            <li data-workflow={r.key} class={r.ok === undefined ? 'pending' : r.ok ? 'ok' : 'failed'}>
              {results.label} {r.key}: {r.text}
            </li>
          ))}
          {busy ? null : (
            <li>
              <button type="button" class="small" onClick={() => setResults(undefined)}>
                Dismiss
              </button>
            </li>
          )}
        </ul>
      ) : null}
    </div>
  );
}
