/**
 * The plugflow web UI: one page, routed by the URL's fragment (router.ts), talking only to the
 * server that served it, with the user's bearer token (api.ts). Each view is a file in pages/.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, onUnanswered, setToken, SLOW_MS, token } from './api.js';
import { href, useRoute } from './router.js';
import { LoginPage } from './pages/login.js';
import { WorkflowList } from './pages/workflow-list.js';
import { WorkflowPage } from './pages/workflow-page.js';
import { ArchivedPage } from './pages/archived.js';
import { TemplatesPage } from './pages/templates.js';
import { SubmitPage } from './pages/submit.js';
import { BindingsPage } from './pages/bindings.js';
import { PluginsPage } from './pages/plugins.js';
import { CronPage } from './pages/cron.js';

const NS_KEY = 'plugflow.namespace';

interface User {
  username: string;
}

/** Requests the server has not answered for a while, said at the top of every page. */
function Unanswered() {
  const [requests, setRequests] = useState<string[]>([]);
  useEffect(() => onUnanswered(setRequests), []);
  if (requests.length === 0) return null;
  const secure = location.protocol === 'https:';
  return (
    <p class="unanswered" role="alert">
      The server has not answered {requests.length === 1 ? requests[0] : `${requests.length} requests (${requests[0]}, …)`} for{' '}
      {SLOW_MS / 1000} s or more.{' '}
      {secure
        ? 'It may be overloaded or unreachable.'
        : 'Over plain HTTP a browser opens only six connections to a server: close some plugflow tabs, or serve it over HTTPS (HTTP/2).'}
    </p>
  );
}

function App() {
  const route = useRoute();
  const [namespace, setNamespaceState] = useState(() => sessionStorage.getItem(NS_KEY) ?? '');
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const setNamespace = (ns: string) => {
    sessionStorage.setItem(NS_KEY, ns);
    setNamespaceState(ns);
  };
  useEffect(() => {
    if (!token()) return setUser(null);
    get<User>('/api/v1/userinfo').then(setUser, (err: unknown) => {
      if (err instanceof ApiError && err.status === 401) setToken('');
      setUser(null);
    });
  }, []);
  if (user === undefined)
    return (
      <>
        <Unanswered />
        <p class="loading">Checking the token…</p>
      </>
    );
  if (user === null || route.path[0] === 'login') return <LoginPage onLogin={setUser} />;

  const [page, a, b] = route.path;
  const ns = namespace;
  const nav: [string, string][] = [
    ['workflows', 'Workflows'],
    ['templates', 'Templates'],
    ['cron', 'Cron workflows'],
    ['bindings', 'Event bindings'],
    ['plugins', 'Executor plugins'],
  ];
  return (
    <>
      <header>
        <a class="brand" href="#/workflows">
          plugflow
        </a>
        <nav aria-label="Main">
          {nav.map(([p, label]) => (
            <a href={href([p])} aria-current={page === p ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <label class="ns">
          Namespace{' '}
          <input
            value={ns}
            placeholder="all"
            size={12}
            onChange={(e) => setNamespace((e.target as HTMLInputElement).value.trim())}
            aria-label="Namespace (empty for all namespaces)"
          />
        </label>
        <span class="user" title="who the API server sees">
          {user.username}
        </span>
        <button
          type="button"
          class="small"
          onClick={() => {
            setToken('');
            setUser(null);
          }}
        >
          Log out
        </button>
      </header>
      <Unanswered />
      <main>
        {page === 'workflows' && a && b ? (
          <WorkflowPage namespace={a} name={b} selected={route.query.get('node') ?? undefined} tab={route.query.get('tab') ?? 'graph'} />
        ) : page === 'archived' && a ? (
          <ArchivedPage uid={a} selected={route.query.get('node') ?? undefined} tab={route.query.get('tab') ?? 'graph'} />
        ) : page === 'templates' ? (
          <TemplatesPage namespace={a ?? ns} selected={b} />
        ) : page === 'cluster-templates' ? (
          <TemplatesPage namespace={ns} selected={a} cluster />
        ) : page === 'submit' ? (
          <SubmitPage namespace={ns} />
        ) : page === 'bindings' ? (
          <BindingsPage namespace={ns} />
        ) : page === 'plugins' ? (
          <PluginsPage namespace={ns} />
        ) : page === 'cron' ? (
          <CronPage namespace={ns} />
        ) : (
          <WorkflowList namespace={ns} query={route.query} />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
