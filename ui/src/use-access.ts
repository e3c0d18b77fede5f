/** What the user may do in a namespace (GET /api/v1/access/{ns}), for disabling actions with the reason (access.ts). */
import { enc } from './api.js';
import { useGet } from './use-get.js';
import type { Access } from './types.js';

export { refusal } from './access.js';

export function useAccess(namespace: string): Record<string, Access> {
  const got = useGet<{ actions: Record<string, Access> }>(namespace ? `/api/v1/access/${enc(namespace)}` : undefined);
  if (got.error) return { '*': { allowed: false, reason: `could not ask what you may do: ${got.error}` } };
  return got.data?.actions ?? {};
}
