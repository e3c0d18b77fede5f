/**
 * The test control plane behaves like a real cluster where our code depends on it: RBAC is
 * enforced, unknown tokens are refused, owner references are garbage-collected, namespaces are
 * deleted with their contents, and service-account tokens are issued and accepted.
 */
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminKubeConfig,
  createTestNamespace,
  deleteTestNamespace,
  kubeConfigForToken,
  kubeConfigForUser,
  serviceAccountToken,
} from './support/cluster.js';

async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

function status(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

describe('test control plane', () => {
  let ns: string;
  const core = () => adminKubeConfig().makeApiClient(CoreV1Api);
  beforeAll(async () => {
    ns = await createTestNamespace('cp');
  });
  afterAll(async () => deleteTestNamespace(ns));

  it('enforces RBAC: a test user without bindings is forbidden, an unknown token unauthorized', async () => {
    const alice = kubeConfigForUser('alice').makeApiClient(CoreV1Api);
    const forbidden = await alice.listNamespacedPod({ namespace: ns }).catch((e: unknown) => status(e));
    expect(forbidden).toBe(403);
    const stranger = kubeConfigForToken('not-a-token').makeApiClient(CoreV1Api);
    const unauthorized = await stranger.listNamespacedPod({ namespace: ns }).catch((e: unknown) => status(e));
    expect(unauthorized).toBe(401);
  });

  it('garbage-collects objects whose owner is deleted', async () => {
    const owner = await core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'owner' } } });
    await core().createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: { name: 'child', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }] },
      },
    });
    await core().deleteNamespacedConfigMap({ name: 'owner', namespace: ns });
    const gone = await eventually(async () =>
      core()
        .readNamespacedConfigMap({ name: 'child', namespace: ns })
        .then(
          () => undefined,
          (e: unknown) => status(e),
        ),
    );
    expect(gone).toBe(404);
  });

  it('creates default service accounts and issues tokens the API server accepts', async () => {
    await eventually(async () =>
      core()
        .readNamespacedServiceAccount({ name: 'default', namespace: ns })
        .catch(() => undefined),
    );
    const token = await serviceAccountToken(ns, 'default');
    const asSa = kubeConfigForToken(token).makeApiClient(CoreV1Api);
    // Authenticated (not 401) but without rights (403): the token is valid.
    expect(await asSa.listNamespacedPod({ namespace: ns }).catch((e: unknown) => status(e))).toBe(403);
  });

  it('deletes a namespace together with its contents', async () => {
    const doomed = await createTestNamespace('doomed');
    await core().createNamespacedConfigMap({ namespace: doomed, body: { metadata: { name: 'x' } } });
    await core().deleteNamespace({ name: doomed });
    const gone = await eventually(async () =>
      core()
        .readNamespace({ name: doomed })
        .then(
          () => undefined,
          (e: unknown) => status(e),
        ),
    );
    expect(gone).toBe(404);
  });
});
