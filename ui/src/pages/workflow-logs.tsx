/**
 * The logs of all of a workflow's pods in one view, each line prefixed with its node's display
 * name, with a filter that marks the matches and can hide the other lines. Each pod's log comes
 * from the per-pod log route (src/server/routes/pod-logs.ts); how many pods and how many streams
 * at once is bounded (workflow-logs.ts), and the view says so.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, explain, stream } from '../api.js';
import { Cli, ErrorBox } from '../components.js';
import type { Workflow } from '../types.js';
import { filterLines, LINES_PER_POD, logPods, MAX_PODS, OPEN_AT_ONCE, type LogLine, type LogPod } from '../workflow-logs.js';

type PodState = 'waiting' | 'open' | 'ended' | { error: string };

interface Pool {
  abort: AbortController;
  queue: LogPod[];
  open: number;
  frame: number;
  lines: Map<string, string[]>;
  states: Map<string, PodState>;
}

function newPool(): Pool {
  return { abort: new AbortController(), queue: [], open: 0, frame: 0, lines: new Map(), states: new Map() };
}

export function WorkflowLogs({ wf }: { wf: Workflow }) {
  const { namespace, name } = wf.metadata;
  const { pods, total } = logPods(wf);
  const key = pods.map((p) => `${p.pod}:${p.running ? 'r' : 'f'}`).join(',');
  const [query, setQuery] = useState('');
  const [onlyMatching, setOnlyMatching] = useState(true);
  const [, setTick] = useState(0);
  const pool = useRef<Pool>(newPool());
  const redraw = (p: Pool) => {
    if (!p.frame) p.frame = requestAnimationFrame(() => ((p.frame = 0), setTick((t) => t + 1)));
  };

  useEffect(() => {
    const p = newPool();
    pool.current = p;
    return () => {
      p.abort.abort();
      cancelAnimationFrame(p.frame);
    };
  }, [namespace, name]);

  useEffect(() => {
    const p = pool.current;
    const pump = () => {
      while (p.open < OPEN_AT_ONCE && p.queue.length > 0 && !p.abort.signal.aborted) {
        const pod = p.queue.shift()!;
        p.open++;
        p.states.set(pod.pod, 'open');
        const got: string[] = [];
        p.lines.set(pod.pod, got);
        const path = `/api/v1/workflows/${enc(namespace)}/${enc(name)}/log?podName=${enc(pod.pod)}&logOptions.container=${enc(pod.container)}${pod.running ? '&logOptions.follow=true' : ''}`;
        stream(
          path,
          (r) => {
            got.push((r as { content: string }).content);
            if (got.length > LINES_PER_POD) got.splice(0, got.length - LINES_PER_POD);
            redraw(p);
          },
          p.abort.signal,
        )
          .then(
            () => p.states.set(pod.pod, 'ended'),
            (err: unknown) => {
              if (!p.abort.signal.aborted) p.states.set(pod.pod, { error: explain(err) });
            },
          )
          .finally(() => {
            p.open--;
            redraw(p);
            pump();
          });
      }
    };
    // New pods wait for a free stream; one refused while it was starting (its container had
    // not started) is asked again when the workflow changes.
    for (const pod of pods) {
      const st = p.states.get(pod.pod);
      if (st !== undefined && typeof st !== 'object') continue;
      if (p.queue.some((q) => q.pod === pod.pod)) continue;
      p.states.set(pod.pod, 'waiting');
      p.queue.push(pod);
    }
    pump();
    redraw(p);
  }, [key, pool.current]);

  const p = pool.current;
  const all: LogLine[] = pods.flatMap((pod) => (p.lines.get(pod.pod) ?? []).map((text) => ({ node: pod.node, text })));
  const { shown, matches } = filterLines(all, query, onlyMatching);
  // A running pod's log may not be readable yet (its container is starting): asked again later.
  const errors = pods.flatMap((pod) => {
    const st = p.states.get(pod.pod);
    return typeof st === 'object' && !pod.running ? [`${pod.node} (${pod.pod}): ${st.error}`] : [];
  });
  const reading = pods.filter((pod) => p.states.get(pod.pod) === 'open').length;
  const waiting = pods.filter((pod) => p.states.get(pod.pod) === 'waiting').length;
  return (
    <section class="wf-logs" aria-label="Logs of every pod">
      <div class="title-row">
        <label>
          Filter{' '}
          <input
            class="log-filter"
            type="search"
            value={query}
            placeholder="text or step name"
            aria-label="Filter the log lines"
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          <input type="checkbox" checked={onlyMatching} onChange={(e) => setOnlyMatching((e.target as HTMLInputElement).checked)} /> Only
          matching lines
        </label>
        <span class="count" aria-live="polite">
          {query.trim() ? `${matches} matching of ${all.length} lines` : `${all.length} lines`}
        </span>
      </div>
      <p class="hint bound">
        {total > MAX_PODS ? `Showing the logs of the first ${MAX_PODS} of ${total} pods. ` : `${total} pod${total === 1 ? '' : 's'}. `}
        At most {OPEN_AT_ONCE} logs are read at once{reading || waiting ? ` (reading ${reading}, ${waiting} waiting)` : ''}; a node's panel
        shows its own log, and <code>plugflow logs</code> every pod's.
      </p>
      {errors.length > 0 ? <ErrorBox error={errors.join('\n')} /> : null}
      <pre class="log wf-log" tabIndex={0} aria-label="Log lines" aria-live="off">
        {shown.map((l) => (
          <span class="line">
            <span class="who">{l.node}</span>
            {' | '}
            {l.pieces.map((piece, i) => (i % 2 === 1 ? <mark>{piece}</mark> : piece))}
            {'\n'}
          </span>
        ))}
      </pre>
      <Cli command={`plugflow logs ${name} -n ${namespace}${query.trim() ? ` | grep -i '${query.trim().replace(/'/g, `'\\''`)}'` : ''}`} />
    </section>
  );
}
