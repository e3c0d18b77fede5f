/** Login in client mode: paste a bearer token; it is checked at once and kept for this tab only. */
import { useState } from 'preact/hooks';
import { call, explain, setToken } from '../api.js';
import { Cli, ErrorBox } from '../components.js';

export function LoginPage({ onLogin }: { onLogin: (u: { username: string }) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setToken(value.trim());
    try {
      const user = await call<{ username: string }>('GET', '/api/v1/userinfo');
      setError(undefined);
      if (location.hash.startsWith('#/login')) location.hash = '#/workflows';
      onLogin(user);
    } catch (err) {
      setToken('');
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>plugflow</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Bearer token</label>
        <p class="hint">
          The server acts with this token's rights, so you see and do what your Kubernetes role allows. It is kept in this tab only and
          forgotten when the tab closes.
        </p>
        <textarea id="token" rows={4} value={value} onInput={(e) => setValue((e.target as HTMLTextAreaElement).value)} required />
        <ErrorBox error={error} />
        <button type="submit" disabled={busy || !value.trim()}>
          {busy ? 'Checking…' : 'Log in'}
        </button>
      </form>
      <Cli command="kubectl create token <service-account> -n <namespace>" />
    </main>
  );
}
