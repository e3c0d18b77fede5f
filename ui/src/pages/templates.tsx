/**
 * WorkflowTemplates of a namespace (or ClusterWorkflowTemplates), and a form to submit one: a
 * field per parameter of its `spec.arguments` (a list for `enum`), then a Workflow that
 * references the template is created in the namespace with the user's rights. The chosen
 * template can be edited as YAML and saved (yaml-editor.tsx).
 */
import { useState } from 'preact/hooks';
import { enc } from '../api.js';
import { useGet } from '../use-get.js';
import { Cli, ErrorBox, Refusal } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';
import { href } from '../router.js';
import { useSubmit } from '../submit-workflow.js';
import { refusal, useAccess } from '../use-access.js';
import { valueText, type List, type Template } from '../types.js';
import { YamlEditor } from './yaml-editor.js';

export function TemplatesPage({ namespace, selected, cluster = false }: { namespace: string; selected?: string; cluster?: boolean }) {
  const kind = cluster ? 'ClusterWorkflowTemplate' : 'WorkflowTemplate';
  const got = useGet<List<Template>>(
    !namespace ? undefined : cluster ? '/api/v1/cluster-workflow-templates' : `/api/v1/workflow-templates/${enc(namespace)}`,
  );
  const [list, error] = [got.data?.items, got.error];
  const editWhy = refusal(useAccess(namespace), 'templateUpdate');
  if (!namespace) return <NeedNamespace what={`${kind}s are submitted into a namespace; they`} />;
  const chosen = list?.find((t) => t.metadata.name === selected);
  const link = (name?: string) =>
    cluster ? href(['cluster-templates', ...(name ? [name] : [])]) : href(['templates', namespace, ...(name ? [name] : [])]);
  return (
    <section>
      <div class="title-row">
        <h1>{cluster ? 'Cluster workflow templates' : `Workflow templates in ${namespace}`}</h1>
        <a href={cluster ? href(['templates', namespace]) : href(['cluster-templates'])}>
          {cluster ? `Workflow templates in ${namespace}` : 'Cluster workflow templates'}
        </a>
      </div>
      <ErrorBox error={error} />
      {list === undefined && !error ? <p class="loading">Loading…</p> : null}
      {list?.length === 0 ? (
        <p class="empty">
          No {kind}s{cluster ? '' : ` in ${namespace}`}.
        </p>
      ) : null}
      <ul class="cards">
        {list?.map((t) => (
          <li aria-current={t.metadata.name === selected ? 'true' : undefined}>
            <a href={link(t.metadata.name)}>{t.metadata.name}</a>
            <span class="meta">
              {(t.spec?.arguments?.parameters ?? []).length} parameters · entrypoint {t.spec?.entrypoint ?? '—'}
            </span>
          </li>
        ))}
      </ul>
      {chosen ? <SubmitForm namespace={namespace} template={chosen} cluster={cluster} /> : null}
      {chosen ? (
        <details class="edit-yaml">
          <summary>
            Edit {kind} {chosen.metadata.name} (YAML)
          </summary>
          <YamlEditor
            key={`${namespace}/${chosen.metadata.name}`}
            title={`${kind} ${chosen.metadata.name}`}
            object={chosen as unknown as Record<string, unknown>}
            path={
              cluster
                ? `/api/v1/cluster-workflow-templates/${enc(chosen.metadata.name)}`
                : `/api/v1/workflow-templates/${enc(namespace)}/${enc(chosen.metadata.name)}`
            }
            bodyKey="template"
            why={cluster ? undefined : editWhy}
            onSaved={got.reload}
          />
        </details>
      ) : null}
      <Cli command={cluster ? 'plugflow cluster-template list' : `plugflow template list -n ${namespace}`} />
    </section>
  );
}

function SubmitForm({ namespace, template, cluster }: { namespace: string; template: Template; cluster: boolean }) {
  const params = template.spec?.arguments?.parameters ?? [];
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(params.map((p) => [p.name, valueText(p.value ?? p.default)])),
  );
  const { busy, error, submit: create } = useSubmit(namespace);
  const why = refusal(useAccess(namespace), 'submitTemplate');
  const name = template.metadata.name;
  const submit = async (e: Event) => {
    e.preventDefault();
    await create({
      metadata: { generateName: `${name}-` },
      spec: {
        workflowTemplateRef: cluster ? { name, clusterScope: true } : { name },
        arguments: { parameters: params.map((p) => ({ name: p.name, value: values[p.name] ?? '' })) },
      },
    });
  };
  return (
    <form class="submit-form" onSubmit={(e) => void submit(e)} aria-labelledby="submit-title">
      <h2 id="submit-title">
        Submit {name} to {namespace}
      </h2>
      {params.length === 0 ? <p class="hint">This template takes no parameters.</p> : null}
      {params.map((p) => (
        <label class="field">
          <span>{p.name}</span>
          {p.enum ? (
            <select value={values[p.name]} onChange={(e) => setValues({ ...values, [p.name]: (e.target as HTMLSelectElement).value })}>
              {p.enum.map(valueText).map((v) => (
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
      <Refusal label="Submit" why={why} />
      <button type="submit" disabled={busy || !!why} title={why}>
        {busy ? 'Submitting…' : 'Submit'}
      </button>
      <Cli
        command={`echo '{"metadata":{"generateName":"${name}-"},"spec":{"workflowTemplateRef":{"name":"${name}"${cluster ? ',"clusterScope":true' : ''}}}}' | plugflow submit - -n ${namespace}${params.map((p) => ` -p '${p.name}=${values[p.name] ?? ''}'`).join('')}`}
      />
    </form>
  );
}
