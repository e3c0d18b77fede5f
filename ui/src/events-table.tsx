/** Kubernetes Events about a workflow or one of its pods (GET …/workflows/{ns}/{name}/events). */
import { enc } from './api.js';
import { useGet } from './use-get.js';
import { ErrorBox } from './components.js';
import { ago } from './format.js';
import { useNow, youngest } from './use-now.js';

interface Event {
  type?: string;
  reason?: string;
  message?: string;
  count: number;
  lastTimestamp?: string;
  source?: string;
}

export function EventsTable({
  namespace,
  workflow,
  pod,
  version,
}: {
  namespace: string;
  workflow: string;
  pod?: string;
  version?: string;
}) {
  const got = useGet<{ items: Event[] }>(
    `/api/v1/workflows/${enc(namespace)}/${enc(workflow)}/events${pod ? `?podName=${enc(pod)}` : ''}`,
    version,
  );
  const [items, error] = [got.data?.items, got.error];
  const now = useNow(youngest((items ?? []).map((e) => e.lastTimestamp)));
  return (
    <section class="events">
      <h3>Events</h3>
      <ErrorBox error={error} />
      {items?.length === 0 ? <p class="empty">No events.</p> : null}
      {items && items.length > 0 ? (
        <table class="list">
          <tbody>
            {items.map((e) => (
              <tr class={e.type === 'Warning' ? 'warning' : ''}>
                <td title={e.lastTimestamp}>{ago(e.lastTimestamp, now)}</td>
                <td>{e.reason}</td>
                <td>
                  {e.message}
                  {e.count > 1 ? ` (×${e.count})` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
