/**
 * Submit a workflow from a file or pasted YAML/JSON, read here with the reader the CLI and the
 * server use (src/yaml/kube-yaml.ts: what kubectl reads, as kubectl reads it), so the page says
 * what `plugflow submit` would say — keys read as YAML 1.1 booleans included.
 */
import { useState } from 'preact/hooks';
import { booleanKeys } from '../../../src/yaml/bool-keys.js';
import { readYamlDocuments } from '../../../src/yaml/kube-yaml.js';
import { explain } from '../api.js';
import { Cli, ErrorBox, Refusal } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';
import { useSubmit } from '../submit-workflow.js';
import { refusal, useAccess } from '../use-access.js';

export function SubmitPage({ namespace }: { namespace: string }) {
  const [text, setText] = useState('');
  const warnings = booleanKeys(text, 'the workflow');
  const { busy, error, setError, submit: create } = useSubmit(namespace);
  const why = refusal(useAccess(namespace), 'submit');
  if (!namespace) return <NeedNamespace what="Workflows are submitted into a namespace; they" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let docs: unknown[];
    try {
      docs = readYamlDocuments(text, 'the workflow');
    } catch (err) {
      return setError(`The text is not YAML or JSON: ${explain(err)}`);
    }
    if (docs.length !== 1)
      return setError(
        docs.length === 0
          ? 'The text holds no document: paste one Workflow.'
          : `The text holds ${docs.length} YAML documents (separated by ---): the page submits one workflow at a time; keep one, or submit the file with plugflow submit (it submits each).`,
      );
    await create(docs[0]);
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
        {warnings.length > 0 ? (
          <ul class="warnings" aria-label="Warnings">
            {warnings.map((w) => (
              <li>{w.message}</li>
            ))}
          </ul>
        ) : null}
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
