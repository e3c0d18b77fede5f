/**
 * The Authorization of the client's own identity, as its kubeconfig gives it (bearer token or
 * Basic auth; a client certificate goes on the connection, not here), and the explanation of a
 * refused impersonation.
 */
import type { RequestOptions } from 'node:https';
import { IMPERSONATE_CLUSTER_ROLE } from '../api/index.js';
import { ApiError, IMPERSONATION_REFUSED } from './errors.js';
import type { KubeAccess } from './kube-access.js';

/** The kubeconfig's Authorization header, read now (tokens rotate: the client re-reads it every minute). */
export async function kubeconfigAuthorization(kc: KubeAccess): Promise<Record<string, string>> {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  const given = (opts.headers ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(given)) if (k.toLowerCase() === 'authorization' && typeof v === 'string') headers.authorization = v;
  if (!headers.authorization && typeof opts.auth === 'string' && opts.auth !== 'undefined:undefined') {
    headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  }
  return headers;
}

/** A 403 "cannot impersonate" as acting for `sa` names the binding that is missing. */
export function explainImpersonationRefusal(err: ApiError, sa: { namespace: string; name: string }): ApiError {
  if (err.code !== 403 || !/cannot impersonate/.test(err.message)) return err;
  return new ApiError(
    err.code,
    IMPERSONATION_REFUSED,
    `the controller may not act as service account ${sa.namespace}/${sa.name}: bind ClusterRole ${IMPERSONATE_CLUSTER_ROLE} ` +
      `to the controller's account in namespace ${sa.namespace} (README "Install")`,
    err.request,
  );
}
