/** What the user may do in a namespace (GET /api/v1/access/{ns}), for disabling actions with the reason (access.ts). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, explain, get } from './api.js';
import { useGet } from './use-get.js';
import type { Access } from './types.js';

export { refusal } from './access.js';

export function useAccess(namespace: string): Record<string, Access> {
  const got = useGet<{ actions: Record<string, Access> }>(namespace ? `/api/v1/access/${enc(namespace)}` : undefined);
  if (got.error) return { '*': { allowed: false, reason: `could not ask what you may do: ${got.error}` } };
  return got.data?.actions ?? {};
}

/**
 * What the user may do in each of `namespaces` (the namespaces of a selection): asked once per
 * namespace, as useAccess does; a namespace not answered yet is missing from the map.
 */
export function useAccessIn(namespaces: string[]): Map<string, Record<string, Access>> {
  const [known, setKnown] = useState(() => new Map<string, Record<string, Access>>());
  const asked = useRef(new Set<string>());
  const key = [...new Set(namespaces)].sort().join(',');
  useEffect(() => {
    for (const ns of key ? key.split(',') : []) {
      if (asked.current.has(ns)) continue;
      asked.current.add(ns);
      get<{ actions: Record<string, Access> }>(`/api/v1/access/${enc(ns)}`).then(
        (got) => setKnown((m) => new Map(m).set(ns, got.actions)),
        (err: unknown) =>
          setKnown((m) => new Map(m).set(ns, { '*': { allowed: false, reason: `could not ask what you may do: ${explain(err)}` } })),
      );
    }
  }, [key]);
  return known;
}
