/**
 * Helpers for Kubernetes-facing tests: who you are (admin, a named test user, a service
 * account) and where you work (a fresh namespace per suite).
 */
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';

export interface ClusterInfo {
  kubeconfigPath: string;
  apiServerUrl: string;
  adminToken: string;
  /** Tokens of the named test users (alice, bob, carol, dave, erin); they start without rights. */
  userTokens: Record<string, string>;
  /** The control plane's directory (logs, certificates). */
  dir: string;
}

export function cluster(): ClusterInfo {
  return inject('cluster');
}

/** A KubeConfig acting as cluster admin (system:masters). */
export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster().kubeconfigPath);
  return kc;
}

/** A KubeConfig that authenticates with a bearer token, for the same API server. */
export function kubeConfigForToken(token: string, user = 'user'): KubeConfig {
  const admin = adminKubeConfig();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [admin.getCurrentCluster()!],
    users: [{ name: user, token }],
    contexts: [{ name: 'test', cluster: admin.getCurrentCluster()!.name, user }],
    currentContext: 'test',
  });
  return kc;
}

/** A KubeConfig acting as one of the named test users. */
export function kubeConfigForUser(name: string): KubeConfig {
  const token = cluster().userTokens[name];
  if (!token) throw new Error(`no test user "${name}"; known: ${Object.keys(cluster().userTokens).join(', ')}`);
  return kubeConfigForToken(token, name);
}

/** Issues a token for a service account through the TokenRequest API (as a kubelet would). */
export async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const res = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return res.status!.token!;
}

/** Creates a namespace with a random suffix and returns its name. */
export async function createTestNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase();
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

/** Deletes a namespace (the namespace controller removes what it holds). */
export async function deleteTestNamespace(name: string): Promise<void> {
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name })
    .catch(() => {});
}

/** Grants a user a ClusterRole inside one namespace. */
export async function grantClusterRole(namespace: string, user: string, clusterRole: string): Promise<void> {
  const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `${user}-${clusterRole}`.replace(/[^a-z0-9-]/g, '-') },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
}

/** Reads a file of the control plane's directory (e.g. a component log) for diagnostics. */
export function controlPlaneFile(name: string): string {
  return readFileSync(`${cluster().dir}/${name}`, 'utf8');
}
