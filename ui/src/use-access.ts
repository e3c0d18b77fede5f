/** What the user may do in a namespace (GET /api/v1/access/{ns}), for disabling actions with the reason. */
import { enc } from './api.js';
import { useGet } from './use-get.js';
import type { Access } from './types.js';

export function useAccess(namespace: string): Record<string, Access> {
  const got = useGet<{ actions: Record<string, Access> }>(namespace ? `/api/v1/access/${enc(namespace)}` : undefined);
  if (got.error) return { '*': { allowed: false, reason: `could not ask what you may do: ${got.error}` } };
  return got.data?.actions ?? {};
}

/** Why an action is not possible now (no right, or the workflow's state), or undefined when it is. */
export function refusal(access: Record<string, Access>, action: string, stateReason?: string): string | undefined {
  const a = access[action] ?? access['*'];
  if (a && !a.allowed) return a.reason ?? 'not allowed';
  return stateReason;
}
