/** What the user may do in a namespace (GET /api/v1/access/{ns}), for disabling actions with the reason. */
import { useEffect, useState } from 'preact/hooks';
import { enc, explain, get } from './api.js';
import type { Access } from './types.js';

export function useAccess(namespace: string): Record<string, Access> {
  const [access, setAccess] = useState<Record<string, Access>>({});
  useEffect(() => {
    if (!namespace) return;
    get<{ actions: Record<string, Access> }>(`/api/v1/access/${enc(namespace)}`).then(
      (r) => setAccess(r.actions),
      (err: unknown) => setAccess({ '*': { allowed: false, reason: `could not ask what you may do: ${explain(err)}` } }),
    );
  }, [namespace]);
  return access;
}

/** Why an action is not possible now (no right, or the workflow's state), or undefined when it is. */
export function refusal(access: Record<string, Access>, action: string, stateReason?: string): string | undefined {
  const a = access[action] ?? access['*'];
  if (a && !a.allowed) return a.reason ?? 'not allowed';
  return stateReason;
}
