/**
 * Resubmit with changed arguments: the workflow's parameters prefilled and editable; the changed
 * ones are sent as the peer's `parameters` (ui/src/resubmit.ts), then the new workflow opens.
 */
import { useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';
import { Cli, ErrorBox } from '../components.js';
import { changedParameters, initialValues, resubmitCommand } from '../resubmit.js';
import { go } from '../router.js';
import { valueText, type Workflow } from '../types.js';

export function ResubmitForm({ wf, onClose }: { wf: Workflow; onClose: () => void }) {
  const { namespace, name } = wf.metadata;
  const params = wf.spec?.arguments?.parameters ?? [];
  const [values, setValues] = useState(() => initialValues(params));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const changed = changedParameters(params, values);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const res = await call<Workflow>('PUT', `/api/v1/workflows/${enc(namespace)}/${enc(name)}/resubmit`, { parameters: changed });
      go(['workflows', res.metadata.namespace, res.metadata.name]);
    } catch (err) {
      setError(`Resubmit failed: ${explain(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="submit-form resubmit-form" onSubmit={(e) => void submit(e)} aria-labelledby="resubmit-title">
      <h2 id="resubmit-title">Resubmit {name}</h2>
      <p class="hint">A new workflow with the same spec, labels and annotations; change the arguments it is given here.</p>
      {params.length === 0 ? <p class="hint">This workflow takes no arguments.</p> : null}
      {params.map((p) => (
        <label class="field">
          <span>{p.name}</span>
          {p.enum ? (
            <select
              name={p.name}
              value={values[p.name]}
              onChange={(e) => setValues({ ...values, [p.name]: (e.target as HTMLSelectElement).value })}
            >
              {(p.enum.map(valueText).includes(values[p.name] ?? '')
                ? p.enum.map(valueText)
                : [values[p.name] ?? '', ...p.enum.map(valueText)]
              ).map((v) => (
                <option value={v}>{v}</option>
              ))}
            </select>
          ) : (
            <input
              name={p.name}
              value={values[p.name]}
              placeholder={p.valueFrom ? `from ${Object.keys(p.valueFrom).join(', ')} (unchanged when empty)` : ''}
              onInput={(e) => setValues({ ...values, [p.name]: (e.target as HTMLInputElement).value })}
            />
          )}
          {p.description ? <small>{p.description}</small> : null}
        </label>
      ))}
      <ErrorBox error={error} />
      <div class="form-buttons">
        <button type="submit" disabled={busy}>
          {busy ? 'Resubmitting…' : changed.length ? `Resubmit with ${changed.length} changed` : 'Resubmit'}
        </button>{' '}
        <button type="button" class="small" onClick={onClose}>
          Cancel
        </button>
      </div>
      <Cli command={resubmitCommand(name, namespace, changed)} />
    </form>
  );
}
