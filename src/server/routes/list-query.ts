/**
 * The peer's list options as query parameters (`listOptions.labelSelector=…`), shared by the list
 * and watch endpoints. A repeated parameter counts by its last value.
 */
import { badRequest } from '../errors.js';

export type ListQuery = Record<string, string | string[] | undefined>;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export function listQuery(q: ListQuery): ListOptions {
  const one = (k: string): string | undefined => {
    const v = q[`listOptions.${k}`];
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    return last === '' ? undefined : last;
  };
  const limit = one('limit');
  if (limit !== undefined && !/^\d+$/.test(limit)) throw badRequest(`listOptions.limit must be a whole number, got "${limit}"`);
  return {
    labelSelector: one('labelSelector'),
    fieldSelector: one('fieldSelector'),
    limit: limit ? Number(limit) : undefined,
    continue: one('continue'),
    resourceVersion: one('resourceVersion'),
  };
}
