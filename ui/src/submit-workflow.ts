/** Creating a workflow from the UI (a file, a template's form): POST it, then open it. */
import { useState } from 'preact/hooks';
import { call, enc, explain } from './api.js';
import { go } from './router.js';
import type { Workflow } from './types.js';

/** `submit(workflow)` creates it in `namespace` with the user's rights and opens it; `error` says why not. */
export function useSubmit(namespace: string) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (workflow: unknown) => {
    setBusy(true);
    setError(undefined);
    try {
      const wf = await call<Workflow>('POST', `/api/v1/workflows/${enc(namespace)}`, { workflow });
      go(['workflows', wf.metadata.namespace, wf.metadata.name]);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, submit };
}
