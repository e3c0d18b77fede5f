/**
 * Workflows kept live from the server's watch stream (GET /api/v1/workflow-events/…): the stream
 * starts with every workflow, then sends each change. Changes are applied to a map and the view
 * re-renders at most once per animation frame, so a burst of a thousand changes is one render.
 * When the stream ends (the server's watch ended, the network dropped) it reconnects and starts
 * over from a fresh list: after a second, then — while the server cannot be reached or ends the
 * stream before its list — after 2 s, 4 s … at most 30 s, saying the server is not reachable.
 * A token that may list workflows but not watch them gets the list and then a refused watch: the
 * list is then read again every POLL_MS (saying so), instead of staying a frozen snapshot.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, explain, stream } from './api.js';
import { backoff } from './backoff.js';
import type { Workflow } from './types.js';

interface Change {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Workflow;
}

export interface Live {
  workflows: Map<string, Workflow>;
  /** Bumped on every applied batch, so views can memoize on it. */
  version: number;
  error?: string;
  /** True once the initial list arrived (`event: synced`) or the stream failed. */
  loaded: boolean;
  /** The server could not be reached (down, restarting, the network): `error` says so. */
  down?: boolean;
  /** Not live: the token may list but not watch, so the list is read again every POLL_MS. */
  polling?: string;
}

export const POLL_MS = 10_000;

/** A failure to reach the server at all, rather than its answer: fetch's TypeError, a proxy's 502/504. */
function unreachable(err: unknown): boolean {
  return err instanceof ApiError ? err.status === 502 || err.status === 504 : err instanceof TypeError;
}

export function useLiveWorkflows(path: string | undefined): Live {
  const map = useRef(new Map<string, Workflow>());
  const [state, setState] = useState<Live>({ workflows: map.current, version: 0, loaded: false });
  useEffect(() => {
    if (!path) return;
    map.current = new Map();
    const abort = new AbortController();
    let frame = 0;
    let version = 0;
    let loaded = false;
    let error: string | undefined;
    let down = false;
    let polling: string | undefined;
    /** Reconnects since the last complete list. */
    let attempt = 0;
    const flush = () => {
      frame = 0;
      setState({ workflows: map.current, version: ++version, error, loaded, down, ...(polling ? { polling } : {}) });
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(flush);
    };
    const run = async () => {
      while (!abort.signal.aborted) {
        // A reconnect fills a new map and shows it once complete, so the view does not flash empty.
        const target = new Map<string, Workflow>();
        let listed = false;
        try {
          await stream(
            path,
            (r) => {
              const c = r as Change;
              const key = `${c.object.metadata.namespace}/${c.object.metadata.name}`;
              if (c.type === 'DELETED') target.delete(key);
              else target.set(key, c.object);
              schedule();
            },
            abort.signal,
            () => {
              listed = true;
              map.current = target;
              loaded = true;
              error = undefined;
              down = false;
              attempt = 0;
              schedule();
            },
          );
        } catch (err) {
          if (abort.signal.aborted) return;
          // The list came, the watch was refused: read the list again now and then.
          if (listed && err instanceof ApiError && err.status === 403) {
            polling = `This token may list workflows but not watch them: the list is read again every ${POLL_MS / 1000} s (${explain(err)})`;
            error = undefined;
            schedule();
            await new Promise((r) => setTimeout(r, POLL_MS));
            continue;
          }
          down = unreachable(err);
          const wait = Math.round(backoff(attempt) / 1000);
          error = down ? `The server is not reachable (${explain(err)}): trying again in ${wait} s` : explain(err);
          loaded = true;
          schedule();
          // Refusals do not get better by retrying quickly.
          if (err instanceof ApiError && (err.status === 401 || err.status === 403 || err.status === 404)) return;
        }
        schedule();
        await new Promise((r) => setTimeout(r, backoff(attempt++)));
      }
    };
    void run();
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [path]);
  return state;
}
