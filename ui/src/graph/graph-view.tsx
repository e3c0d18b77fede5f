/**
 * The workflow graph as SVG: boxes coloured by phase, dots for step/task groups, collapsed boxes
 * that expand on click. Every node is focusable and opens with Enter or Space, and says its name
 * and phase to a screen reader. Expanding a group scrolls the view to its first nodes. A search
 * box finds nodes by name, template or phase, marks them and moves the view to the first; Enter
 * goes to the next, Shift+Enter back (node-search.ts).
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { NodeStatus } from '../types.js';
import { layout, type Placed } from './layout.js';
import { groupsToExpand, searchNodes, step } from './node-search.js';
import { buildGraph } from './workflow-graph.js';

export function GraphView({
  nodes,
  version,
  selected,
  onSelect,
}: {
  nodes: Record<string, NodeStatus>;
  version: string;
  selected?: string;
  onSelect: (id: string) => void;
}) {
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set());
  const [zoom, setZoom] = useState(1);
  const laid = useMemo(() => layout(buildGraph(nodes, { expanded })), [version, expanded]);
  /** The node whose group was just expanded: the view goes to what it leads to. */
  const [reveal, setReveal] = useState<string>();
  const scroller = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!reveal || !scroller.current) return;
    setReveal(undefined);
    const at = new Map(laid.nodes.map((n) => [n.id, n]));
    const shown = laid.edges.filter((e) => e.from === reveal).map((e) => at.get(e.to)!);
    if (shown.length === 0) return;
    const left = Math.min(...shown.map((n) => n.x - n.width / 2));
    const top = Math.min(...shown.map((n) => n.y - n.height / 2));
    scroller.current.scrollTo({ left: Math.max(0, (left - 24) * zoom), top: Math.max(0, (top - 60) * zoom) });
  }, [laid, reveal]);
  // Finding nodes (node-search.ts): the matches are marked, the view goes to the current one.
  const [query, setQuery] = useState('');
  const matches = useMemo(() => searchNodes(nodes, query), [version, query]);
  const [current, setCurrent] = useState<string>();
  const matched = new Set(matches);
  const goTo = (id: string | undefined) => {
    setCurrent(id);
    if (!id) return;
    const collapsed = new Set(laid.nodes.filter((n) => n.kind === 'collapsed').map((n) => n.of!));
    const hiding = groupsToExpand(nodes, id, collapsed);
    if (hiding.length > 0) setExpanded(new Set([...expanded, ...hiding]));
  };
  // A layout effect: the view has moved by the time the count and the marks are painted.
  useLayoutEffect(() => {
    if (!current || !scroller.current) return;
    const n = laid.nodes.find((x) => x.id === current);
    if (!n) return;
    const view = scroller.current;
    view.scrollTo({ left: Math.max(0, n.x * zoom - view.clientWidth / 2), top: Math.max(0, n.y * zoom - view.clientHeight / 2) });
  }, [current, laid, zoom]);
  const open = (n: Placed) => {
    if (n.kind === 'collapsed') {
      setExpanded(new Set([...expanded, n.of!]));
      setReveal(n.of);
    } else onSelect(n.id);
  };
  if (laid.nodes.length === 0) return <p class="empty">No nodes yet: the controller has not started this workflow.</p>;
  return (
    <div class="graph">
      <div class="graph-tools">
        <button type="button" class="small" onClick={() => setZoom(Math.min(2, zoom * 1.25))} aria-label="Zoom in">
          +
        </button>
        <button type="button" class="small" onClick={() => setZoom(Math.max(0.25, zoom / 1.25))} aria-label="Zoom out">
          −
        </button>
        <input
          type="search"
          class="node-search"
          value={query}
          placeholder="Find a node"
          aria-label="Find nodes by name, template or phase (Enter: next match)"
          onInput={(e) => {
            const q = (e.target as HTMLInputElement).value;
            setQuery(q);
            goTo(searchNodes(nodes, q)[0]);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              goTo(step(matches, current, e.shiftKey));
            } else if (e.key === 'Escape') {
              setQuery('');
              setCurrent(undefined);
            }
          }}
        />
        {query.trim() ? (
          <span class="search-count" aria-live="polite">
            {matches.length === 0 ? 'no match' : `${current ? matches.indexOf(current) + 1 : 0} of ${matches.length}`}
          </span>
        ) : null}
        {expanded.size > 0 ? (
          <button type="button" class="small" onClick={() => setExpanded(new Set())}>
            Collapse groups
          </button>
        ) : null}
      </div>
      <div class="graph-scroll" ref={scroller}>
        <svg
          width={laid.width * zoom}
          height={laid.height * zoom}
          viewBox={`0 0 ${laid.width} ${laid.height}`}
          role="group"
          aria-label={`Graph of ${laid.nodes.length} nodes`}
        >
          <g class="edges">
            {laid.edges.map((e) => (
              <polyline points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} />
            ))}
          </g>
          {laid.nodes.map((n) => (
            <g
              key={n.id}
              class={`node kind-${n.kind} phase-${n.phase || 'Unknown'}${n.id === selected ? ' selected' : ''}${matched.has(n.id) ? ' match' : ''}${n.id === current ? ' current' : ''}`}
              transform={`translate(${n.x - n.width / 2},${n.y - n.height / 2})`}
              // Lower case: in SVG, preact sets attributes as written, and only `tabindex` makes the node focusable.
              tabindex={0}
              role="button"
              aria-label={n.kind === 'collapsed' ? `${n.label}, collapsed: expand` : `${n.label}: ${n.phase || 'not started'}`}
              data-node={n.id}
              onClick={() => open(n)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  open(n);
                }
              }}
            >
              {n.kind === 'group' ? (
                <circle cx={n.width / 2} cy={n.height / 2} r={n.width / 2}>
                  <title>{n.label}</title>
                </circle>
              ) : (
                <>
                  <rect width={n.width} height={n.height} rx={6} />
                  <text x={10} y={n.height / 2 + 4}>
                    {clip(n.kind === 'collapsed' ? `${n.label} ${phaseCounts(n.phases)}` : n.label, n.kind === 'collapsed' ? 30 : 24)}
                  </text>
                  <title>
                    {n.kind === 'collapsed'
                      ? `${n.label}: ${phaseCounts(n.phases)} — click to show them`
                      : `${n.label} (${n.type}): ${n.phase}`}
                  </title>
                </>
              )}
            </g>
          ))}
        </svg>
      </div>
    </div>
  );
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function phaseCounts(p: Placed['phases']): string {
  return Object.entries(p ?? {})
    .map(([k, v]) => `${v} ${k.toLowerCase()}`)
    .join(', ');
}
