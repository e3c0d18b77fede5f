/**
 * WorkflowTemplates of a namespace, and a form to submit one: a field per parameter of its
 * `spec.arguments` (a list for `enum`), then a Workflow that references the template is created
 * with the user's rights.
 */
import { useEffect, useState } from 'preact/hooks';
import { enc, explain, get } from '../api.js';
import { Cli, ErrorBox } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';
import { href } from '../router.js';
import { useSubmit } from '../submit-workflow.js';
import type { List, Template } from '../types.js';

export function TemplatesPage({ namespace, selected }: { namespace: string; selected?: string }) {
  const [list, setList] = useState<Template[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!namespace) return;
    setList(undefined);
    get<List<Template>>(`/api/v1/workflow-templates/${enc(namespace)}`).then(
      (l) => setList(l.items),
      (err: unknown) => setError(explain(err)),
    );
  }, [namespace]);
  if (!namespace) return <NeedNamespace what="WorkflowTemplates" />;
  const chosen = list?.find((t) => t.metadata.name === selected);
  return (
    <section>
      <h1>Workflow templates in {namespace}</h1>
      <ErrorBox error={error} />
      {list === undefined && !error ? <p class="loading">Loading…</p> : null}
      {list?.length === 0 ? <p class="empty">No WorkflowTemplates in {namespace}.</p> : null}
      <ul class="cards">
        {list?.map((t) => (
          <li aria-current={t.metadata.name === selected ? 'true' : undefined}>
            <a href={href(['templates', namespace, t.metadata.name])}>{t.metadata.name}</a>
            <span class="meta">
              {(t.spec?.arguments?.parameters ?? []).length} parameters · entrypoint {t.spec?.entrypoint ?? '—'}
            </span>
          </li>
        ))}
      </ul>
      {chosen ? <SubmitForm namespace={namespace} template={chosen} /> : null}
      {chosen ? (
        <details class="spec">
          <summary>WorkflowTemplate {chosen.metadata.name} as stored</summary>
          <pre class="json">{JSON.stringify(chosen, null, 2)}</pre>
        </details>
      ) : null}
      <Cli command={`plugflow template list -n ${namespace}`} />
    </section>
  );
}

function SubmitForm({ namespace, template }: { namespace: string; template: Template }) {
  const params = template.spec?.arguments?.parameters ?? [];
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(params.map((p) => [p.name, p.value ?? p.default ?? ''])),
  );
  const { busy, error, submit: create } = useSubmit(namespace);
  const name = template.metadata.name;
  const submit = async (e: Event) => {
    e.preventDefault();
    await create({
      metadata: { generateName: `${name}-` },
      spec: {
        workflowTemplateRef: { name },
        arguments: { parameters: params.map((p) => ({ name: p.name, value: values[p.name] ?? '' })) },
      },
    });
  };
  return (
    <form class="submit-form" onSubmit={(e) => void submit(e)} aria-labelledby="submit-title">
      <h2 id="submit-title">Submit {name}</h2>
      {params.length === 0 ? <p class="hint">This template takes no parameters.</p> : null}
      {params.map((p) => (
        <label class="field">
          <span>{p.name}</span>
          {p.enum ? (
            <select value={values[p.name]} onChange={(e) => setValues({ ...values, [p.name]: (e.target as HTMLSelectElement).value })}>
              {p.enum.map((v) => (
                <option value={v}>{v}</option>
              ))}
            </select>
          ) : (
            <input
              value={values[p.name]}
              name={p.name}
              onInput={(e) => setValues({ ...values, [p.name]: (e.target as HTMLInputElement).value })}
            />
          )}
          {p.description ? <small>{p.description}</small> : null}
        </label>
      ))}
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Submitting…' : 'Submit'}
      </button>
      <Cli
        command={`echo '{"metadata":{"generateName":"${name}-"},"spec":{"workflowTemplateRef":{"name":"${name}"}}}' | plugflow submit - -n ${namespace}${params.map((p) => ` -p '${p.name}=${values[p.name] ?? ''}'`).join('')}`}
      />
    </form>
  );
}
