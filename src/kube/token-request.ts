/**
 * Service account tokens from the TokenRequest API (`serviceaccounts/token`): the runner's
 * projected token volumes (bound to their pod) and dev mode's component identities.
 */
import type { AuthenticationV1TokenRequest, V1BoundObjectReference } from '@kubernetes/client-node';
import type { KubeClient } from './client.js';
import { SERVICE_ACCOUNTS } from './resource.js';

export interface TokenRequestOptions {
  /** Empty: the API server's own audience. */
  audiences?: string[];
  expirationSeconds: number;
  /** The object the token lives and dies with (a pod). */
  boundObjectRef?: V1BoundObjectReference;
}

/** Issues a token for `namespace/serviceAccount`; throws naming the account when none comes back. */
export async function requestServiceAccountToken(
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
  o: TokenRequestOptions,
): Promise<string> {
  const body: AuthenticationV1TokenRequest = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      audiences: o.audiences ?? [],
      expirationSeconds: o.expirationSeconds,
      ...(o.boundObjectRef ? { boundObjectRef: o.boundObjectRef } : {}),
    },
  };
  const res = await client.createSubresource<AuthenticationV1TokenRequest>(SERVICE_ACCOUNTS, namespace, serviceAccount, 'token', body);
  const token = res.status?.token;
  if (!token) throw new Error(`the TokenRequest for service account ${namespace}/${serviceAccount} returned no token`);
  return token;
}
