/**
 * The executor plugins a namespace's workflows get, and why each other one is not used —
 * shadowed by a plugin of the same name, left out for a clash in the agent pod, or malformed —
 * as the controller decides it (GET /api/v1/executor-plugins/{ns}).
 */
import { enc } from '../api.js';
import { useGet } from '../use-get.js';
import { Cli, ErrorBox } from '../components.js';
import { NeedNamespace } from '../need-namespace.js';

interface Entry {
  namespace: string;
  configMap: string;
  plugin?: string;
  state: 'used' | 'shadowed' | 'left-out' | 'malformed';
  reason?: string;
  instead?: string;
  container?: { name?: string; image?: string; ports: number[] };
}

interface Inventory {
  workflowNamespace: string;
  installNamespace: string;
  plugins: Entry[];
  unreadable: { namespace: string; message: string }[];
}

const STATE_LABEL: Record<Entry['state'], string> = { used: 'used', shadowed: 'shadowed', 'left-out': 'left out', malformed: 'malformed' };

export function PluginsPage({ namespace }: { namespace: string }) {
  const { data: inv, error } = useGet<Inventory>(namespace ? `/api/v1/executor-plugins/${enc(namespace)}` : undefined);
  if (!namespace) return <NeedNamespace what="Executor plugins are chosen per workflow namespace; they" />;
  return (
    <section>
      <h1>Executor plugins for workflows in {namespace}</h1>
      <p class="hint">
        From ConfigMaps labelled <code>workflows.plugflow.io/configmap-type=ExecutorPlugin</code> in {namespace}
        {inv && inv.installNamespace !== namespace ? ` and in the installation namespace ${inv.installNamespace}` : ''}. The controller
        loads them only with <code>WORKFLOW_EXECUTOR_PLUGINS=true</code>.
      </p>
      <ErrorBox error={error} />
      {inv?.unreadable.map((u) => (
        <p class="error">
          Could not read plugins of {u.namespace}: {u.message}
        </p>
      ))}
      {inv?.plugins.length === 0 ? <p class="empty">No executor plugins.</p> : null}
      {inv && inv.plugins.length > 0 ? (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Plugin</th>
              <th scope="col">ConfigMap</th>
              <th scope="col">State</th>
              <th scope="col">Container</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {inv.plugins.map((p) => (
              <tr class={`state-${p.state}`} data-plugin={p.plugin ?? p.configMap}>
                <td>{p.plugin ?? '—'}</td>
                <td>
                  {p.namespace}/{p.configMap}
                </td>
                <td>
                  <span class={`state state-${p.state}`}>{STATE_LABEL[p.state]}</span>
                </td>
                <td>
                  {p.container ? (
                    <code>
                      {p.container.image} {p.container.ports.length ? `:${p.container.ports.join(',')}` : ''}
                    </code>
                  ) : null}
                </td>
                <td>
                  {p.reason ?? ''}
                  {p.instead ? ` (used instead: ${p.instead})` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Cli command={`kubectl get configmaps -n ${namespace} -l workflows.plugflow.io/configmap-type=ExecutorPlugin`} />
    </section>
  );
}
