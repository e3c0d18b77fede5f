/**
 * The UI's address lives in the URL's fragment (`#/workflows/ns/name?node=…`), so the server
 * serves one page for every view and a reload or a shared link opens the same view.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, '') || '/workflows';
  const [p, q = ''] = hash.split('?', 2);
  return { path: p.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** `#/a/b?x=1` from parts, each encoded. */
export function href(path: string[], query: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const qs = q.toString();
  return `#/${path.map(encodeURIComponent).join('/')}${qs ? `?${qs}` : ''}`;
}

/** Opens a view: a new entry in the browser's history. */
export function go(path: string[], query: Record<string, string | undefined> = {}): void {
  location.hash = href(path, query);
}

/**
 * Changes the address in place, without a history entry (a filter as it is typed: Back should
 * not step through every keystroke). replaceState fires no `hashchange`, so one is sent for useRoute.
 */
export function replace(path: string[], query: Record<string, string | undefined> = {}): void {
  history.replaceState(history.state, '', href(path, query));
  dispatchEvent(new HashChangeEvent('hashchange'));
}
