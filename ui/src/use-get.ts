/**
 * One GET of the API for a view: the answer, or the error to show, fetched again when the path
 * (or `version`) changes and on `reload()`. An undefined path fetches nothing (no namespace yet).
 * A new path clears what was shown; a new version or a reload keeps it until the answer comes.
 * An answer that arrives after the path changed is dropped, so a view never shows another
 * namespace's list.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { explain, get } from './api.js';

export interface Got<T> {
  data?: T;
  error?: string;
  reload: () => void;
}

export function useGet<T>(path: string | undefined, version?: string): Got<T> {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [tick, setTick] = useState(0);
  const shown = useRef<string>();
  useEffect(() => {
    if (!path) return;
    let current = true;
    if (shown.current !== path) setState({});
    shown.current = path;
    get<T>(path).then(
      (data) => current && setState({ data }),
      (err: unknown) => current && setState({ error: explain(err) }),
    );
    return () => {
      current = false;
    };
  }, [path, version, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
