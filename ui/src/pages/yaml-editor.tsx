/**
 * A WorkflowTemplate's or CronWorkflow's YAML, editable and saved with PUT (the REST server checks
 * it as a create would and answers with the field it refuses). The text keeps the object's
 * resourceVersion: if it changed since it was loaded, the save is a 409, said as "changed
 * meanwhile" with a Reload button (which replaces the text with the current version).
 */
import { useState } from 'preact/hooks';
import { ApiError, call, explain, get } from '../api.js';
import { ErrorBox, Refusal } from '../components.js';
import { booleanKeys } from '../../../src/yaml/bool-keys.js';
import { editableText, parseEdited, saveFailure } from '../yaml-edit.js';

export interface YamlEditorProps {
  /** `WorkflowTemplate greet`, for the labels. */
  title: string;
  object: Record<string, unknown>;
  /** The object's REST path: GET reloads it, PUT saves it. */
  path: string;
  /** The body's key of the object: `template` or `cronWorkflow`. */
  bodyKey: string;
  /** Why the token may not save (ui/src/access.ts), if it may not. */
  why?: string;
  onSaved: () => void;
}

export function YamlEditor({ title, object, path, bodyKey, why, onSaved }: YamlEditorProps) {
  const [text, setText] = useState(() => editableText(object));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [conflict, setConflict] = useState(false);
  const [saved, setSaved] = useState<string>();
  // Keys kubectl reads as booleans (`on:`, `n:`), said as the Submit page says them.
  const warnings = booleanKeys(text, 'the text');
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setSaved(undefined);
    const edited = parseEdited(text);
    if ('error' in edited) return setError(edited.error);
    setBusy(true);
    try {
      const stored = await call<Record<string, unknown>>('PUT', path, { [bodyKey]: edited.object });
      setText(editableText(stored));
      setConflict(false);
      setSaved(`Saved ${title}.`);
      onSaved();
    } catch (err) {
      const f = saveFailure(err instanceof ApiError ? err.status : undefined, explain(err));
      setError(f.message);
      setConflict(f.conflict);
    } finally {
      setBusy(false);
    }
  };
  const reload = async () => {
    try {
      setText(editableText(await get<Record<string, unknown>>(path)));
      setError(undefined);
      setConflict(false);
      setSaved('Reloaded the current version: make your change again.');
    } catch (err) {
      setError(`Could not reload: ${explain(err)}`);
    }
  };
  return (
    <form class="yaml-editor" onSubmit={(e) => void save(e)} aria-label={`Edit ${title}`}>
      <textarea
        class="yaml"
        spellcheck={false}
        rows={Math.min(40, Math.max(12, text.split('\n').length + 1))}
        value={text}
        aria-label={`${title} as YAML`}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      {warnings.length > 0 ? (
        <ul class="warnings" aria-label="Warnings">
          {warnings.map((w) => (
            <li>{w.message}</li>
          ))}
        </ul>
      ) : null}
      <ErrorBox error={error} />
      <Refusal label="Save" why={why} />
      <div class="form-buttons">
        <button type="submit" data-action="save" disabled={busy || !!why} title={why}>
          {busy ? 'Saving…' : 'Save'}
        </button>{' '}
        {conflict ? (
          <button type="button" class="small" data-action="reload" onClick={() => void reload()}>
            Reload
          </button>
        ) : null}
        {saved ? (
          <span class="done" role="status">
            {saved}
          </span>
        ) : null}
      </div>
    </form>
  );
}
