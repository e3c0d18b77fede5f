/**
 * The connection pools of a Kubernetes client (client.ts), made once from the kubeconfig and
 * shared by every view `as()` makes: the client's own (with its client certificate, if any) and
 * one for callers' tokens (without it, so a caller's request never presents our certificate).
 */
import type { RequestOptions } from 'node:https';
import { Agent, type Dispatcher } from 'undici';
import type { KubeAccess } from './kube-access.js';

/** Pools and state shared by a client and every view `as()` makes of it. */
export interface Shared {
  own: { pool: Dispatcher; watchPool: Dispatcher };
  /**
   * One pool for all callers' tokens, without the client certificate of the kubeconfig, so a
   * caller's request never presents our certificate; the token goes in each request's header,
   * so a connection carries no identity and the pool stays bounded (`connections`) however
   * many callers there are.
   */
  callers: { pool: Dispatcher; watchPool: Dispatcher };
  /** The own identity's Authorization header and when it was read. */
  ownAuth: { headers: Record<string, string>; at: number };
  closed: boolean;
}

/** The pools for the kubeconfig's current cluster: `connections` at most per ordinary pool. */
export async function connectionPools(kc: KubeAccess, connections: number): Promise<Shared> {
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const server = {
    ca: tls.ca as string | Buffer | undefined,
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    servername: tls.servername,
  };
  const own = { ...server, cert: tls.cert as string | Buffer | undefined, key: tls.key as string | Buffer | undefined };
  return {
    own: {
      pool: new Agent({ connect: own, connections, keepAliveTimeout: 30_000 }),
      watchPool: new Agent({ connect: own, keepAliveTimeout: 1_000 }),
    },
    callers: {
      pool: new Agent({ connect: server, connections, keepAliveTimeout: 30_000 }),
      watchPool: new Agent({ connect: server, connections, keepAliveTimeout: 1_000 }),
    },
    ownAuth: { headers: {}, at: -Infinity },
    closed: false,
  };
}
