/** Kubernetes Events about a workflow or one of its pods (GET …/workflows/{ns}/{name}/events). */
import { useEffect, useState } from 'preact/hooks';
import { enc, explain, get } from './api.js';
import { ErrorBox } from './components.js';
import { ago } from './format.js';

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
  const [items, setItems] = useState<Event[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const path = `/api/v1/workflows/${enc(namespace)}/${enc(workflow)}/events${pod ? `?podName=${enc(pod)}` : ''}`;
    get<{ items: Event[] }>(path).then(
      (r) => {
        setItems(r.items);
        setError(undefined);
      },
      (err: unknown) => setError(explain(err)),
    );
  }, [namespace, workflow, pod, version]);
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
                <td title={e.lastTimestamp}>{ago(e.lastTimestamp)}</td>
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
