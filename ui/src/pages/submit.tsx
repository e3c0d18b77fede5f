/** Submit a workflow from a file or pasted YAML/JSON, parsed here with the same YAML library the CLI uses. */
import { useState } from 'preact/hooks';
import { parse } from 'yaml';
import { explain } from '../api.js';
import { Cli, ErrorBox, Refusal } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';
import { useSubmit } from '../submit-workflow.js';
import { refusal, useAccess } from '../use-access.js';

export function SubmitPage({ namespace }: { namespace: string }) {
  const [text, setText] = useState('');
  const { busy, error, setError, submit: create } = useSubmit(namespace);
  const why = refusal(useAccess(namespace), 'submit');
  if (!namespace) return <NeedNamespace what="Workflows are submitted into a namespace; they" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let workflow: unknown;
    try {
      workflow = parse(text);
    } catch (err) {
      return setError(`The text is not YAML or JSON: ${explain(err)}`);
    }
    await create(workflow);
  };
  return (
    <section>
      <h1>Submit a workflow to {namespace}</h1>
      <form class="submit-form" onSubmit={(e) => void submit(e)}>
        <label class="field">
          <span>From a file</span>
          <input
            type="file"
            accept=".yaml,.yml,.json"
            onChange={(e) => {
              const f = (e.target as HTMLInputElement).files?.[0];
              if (f) void f.text().then(setText);
            }}
          />
        </label>
        <label class="field">
          <span>Workflow (YAML or JSON)</span>
          <textarea rows={18} value={text} spellcheck={false} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} required />
        </label>
        <ErrorBox error={error} />
        <Refusal label="Submit" why={why} />
        <button type="submit" disabled={busy || !text.trim() || !!why} title={why}>
          {busy ? 'Submitting…' : 'Submit'}
        </button>
      </form>
      <Cli command={`plugflow submit workflow.yaml -n ${namespace}`} />
    </section>
  );
}
