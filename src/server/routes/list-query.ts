/**
 * The peer's list options as query parameters (`listOptions.labelSelector=…`), shared by the list
 * and watch endpoints. A repeated parameter counts by its last value.
 */
import { LABEL_PREFIX } from '../../api/index.js';
import { badRequest } from '../errors.js';

/**
 * The peer's label prefix. Its clients select by its keys (`argo list --running` sends
 * `workflows.argoproj.io/phase in (Running)`); on plugflow's objects those labels are ours.
 */
const PEER_LABEL_PREFIX = 'workflows.argoproj.io/';

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
    labelSelector: one('labelSelector')?.replaceAll(PEER_LABEL_PREFIX, LABEL_PREFIX),
    fieldSelector: one('fieldSelector'),
    limit: limit ? Number(limit) : undefined,
    continue: one('continue'),
    resourceVersion: one('resourceVersion'),
  };
}
