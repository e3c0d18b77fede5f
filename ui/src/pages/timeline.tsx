/** A Gantt view of a workflow: one bar per step that ran, from its start to its end (or now). */
import { elapsed } from '../format.js';
import type { NodeStatus, Workflow } from '../types.js';
import { useNow, youngest } from '../use-now.js';

const LEAF = new Set(['Pod', 'Container', 'Plugin', 'HTTP', 'Resource', 'Suspend']);

export function Timeline({ wf, onSelect }: { wf: Workflow; onSelect: (id: string) => void }) {
  const nodes = Object.values(wf.status?.nodes ?? {})
    .filter((n): n is NodeStatus & { startedAt: string } => LEAF.has(n.type) && !!n.startedAt)
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.name.localeCompare(b.name));
  // Hooks before any return: the bars of running steps grow with the clock.
  const now = useNow(youngest(nodes.filter((n) => !n.finishedAt).map((n) => n.startedAt)));
  if (nodes.length === 0) return <p class="empty">No step has started yet.</p>;
  const start = Math.min(...nodes.map((n) => Date.parse(n.startedAt)));
  const end = Math.max(...nodes.map((n) => (n.finishedAt ? Date.parse(n.finishedAt) : now)), start + 1);
  const pct = (t: number) => `${((t - start) / (end - start)) * 100}%`;
  return (
    <ol class="timeline" aria-label="Timeline of the steps">
      {nodes.map((n) => {
        const s = Date.parse(n.startedAt);
        const e = n.finishedAt ? Date.parse(n.finishedAt) : now;
        return (
          <li key={n.id}>
            <button type="button" class="timeline-label" onClick={() => onSelect(n.id)}>
              {n.displayName}
            </button>
            <span class="timeline-track">
              <span
                class={`timeline-bar phase-${n.phase}`}
                style={{ left: pct(s), width: `max(2px, calc(${pct(e)} - ${pct(s)}))` }}
                title={`${n.displayName}: ${n.phase}, ${elapsed(n.startedAt, n.finishedAt, now)}`}
              />
            </span>
            <span class="timeline-time">{elapsed(n.startedAt, n.finishedAt, now)}</span>
          </li>
        );
      })}
    </ol>
  );
}
