/** Filtering and sorting the workflow list. Pure: tested beside, and timed by the render bench. */
import type { Workflow } from './types.js';

export type SortKey = 'created' | 'name' | 'namespace' | 'phase' | 'duration';

export interface ListFilter {
  phase?: string;
  /** Part of the name, any case. */
  name?: string;
  sort: SortKey;
  descending: boolean;
}

const PHASE_ORDER: Record<string, number> = { Running: 0, Pending: 1, '': 2, Failed: 3, Error: 4, Succeeded: 5 };

function durationOf(wf: Workflow, now: number): number {
  const s = wf.status?.startedAt;
  if (!s) return 0;
  return (wf.status?.finishedAt ? Date.parse(wf.status.finishedAt) : now) - Date.parse(s);
}

export function filterAndSort(all: Iterable<Workflow>, f: ListFilter, now = Date.now()): Workflow[] {
  const name = f.name?.toLowerCase();
  const out: Workflow[] = [];
  for (const wf of all) {
    if (f.phase && (wf.status?.phase ?? '') !== f.phase) continue;
    if (name && !wf.metadata.name.toLowerCase().includes(name)) continue;
    out.push(wf);
  }
  const key: (wf: Workflow) => string | number =
    f.sort === 'name'
      ? (wf) => wf.metadata.name
      : f.sort === 'namespace'
        ? (wf) => `${wf.metadata.namespace}/${wf.metadata.name}`
        : f.sort === 'phase'
          ? (wf) => PHASE_ORDER[wf.status?.phase ?? ''] ?? 9
          : f.sort === 'duration'
            ? (wf) => durationOf(wf, now)
            : (wf) => wf.metadata.creationTimestamp ?? '';
  const dir = f.descending ? -1 : 1;
  const keyed = out.map((wf) => [key(wf), wf] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : a[1].metadata.name < b[1].metadata.name ? -1 : 1));
  return keyed.map(([, wf]) => wf);
}

/** The rows of a virtual list that are on screen (with a margin), for a row height and scroll position. */
export function visibleRange(scrollTop: number, viewHeight: number, rowHeight: number, total: number, margin = 10): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - margin);
  const last = Math.min(total, Math.ceil((scrollTop + viewHeight) / rowHeight) + margin);
  return [first, last];
}
