/**
 * "Retry from here" in a failed workflow's node panel: the node and everything that follows it
 * run again, the steps before it keep their results — the peer's retry with
 * `restartSuccessful` and `nodeFieldSelector: id=<node>` (src/operations/retry-from.ts). Checked
 * like the workflow's Retry (ui/src/access.ts), and disabled with the reason.
 *
 * A retry removes the node from the status and the controller starts it again under the same
 * id, so the panel closes and opens again meanwhile: what the retry said is kept here, by
 * workflow and node, not in the panel's state, and shown when the panel is back.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, enc, explain } from '../api.js';
import { ErrorBox, Refusal } from '../components.js';
import type { NodeStatus, Workflow } from '../types.js';
import { refusal, useAccess } from '../use-access.js';

interface Said {
  busy?: boolean;
  done?: string;
  error?: string;
}

const said = new Map<string, Said>();
const listeners = new Set<() => void>();

function say(key: string, s: Said): void {
  said.set(key, s);
  for (const l of listeners) l();
}

function useSaid(key: string): Said {
  const [, redraw] = useState(0);
  useEffect(() => {
    const l = () => redraw((t) => t + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return said.get(key) ?? {};
}

export function RetryNode({ wf, node }: { wf: Workflow; node: NodeStatus }) {
  const { namespace, name } = wf.metadata;
  const key = `${namespace}/${name}/${node.id}`;
  const failed = wf.status?.phase === 'Failed' || wf.status?.phase === 'Error';
  // Asked only for a failed workflow: the panel of a running one makes no request of its own.
  const why = refusal(useAccess(failed ? namespace : ''), 'retry', failed ? undefined : 'only a Failed or Error workflow can be retried');
  const { busy, done, error } = useSaid(key);
  // Shown for a failed workflow, and after a retry (which sets it running) to say how it went.
  if (!failed && !done && !error && !busy) return null;
  const run = async () => {
    if (!confirm(`Retry from ${node.displayName}? It and every step after it run again; the steps before it keep their results.`)) return;
    say(key, { busy: true });
    try {
      await call('PUT', `/api/v1/workflows/${enc(namespace)}/${enc(name)}/retry`, {
        restartSuccessful: true,
        nodeFieldSelector: `id=${node.id}`,
      });
      say(key, { done: `Retry from ${node.displayName}: done` });
    } catch (err) {
      say(key, { error: `Retry from ${node.displayName} failed: ${explain(err)}` });
    }
  };
  return (
    <div class="retry-node">
      <button type="button" data-action="retry-node" disabled={busy || !!why} title={why} onClick={() => void run()}>
        {busy ? 'Retrying…' : 'Retry from here'}
      </button>
      <Refusal label="Retry from here" why={why} />
      <ErrorBox error={error} />
      {done ? (
        <span class="done" role="status">
          {done}
        </span>
      ) : null}
    </div>
  );
}
