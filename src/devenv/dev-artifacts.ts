/**
 * Artifacts in dev mode: a MinIO for the local runner's pods, and in each workflow namespace the
 * Secret with its credentials and the `artifact-repositories` ConfigMap that makes it the default
 * repository — the same set-up the README asks of an installation, done for you.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { rmSync } from 'node:fs';
import { ANNOTATION_DEFAULT_REPOSITORY, REPOSITORIES_CONFIGMAP } from '../artifacts/repository.js';
import { storeClient } from '../artifacts/s3.js';
import type { KubeClient } from '../kube/client.js';
import { isAlreadyExists } from '../kube/errors.js';
import { CONFIGMAPS, SECRETS } from '../kube/resource.js';
import { startObjectStore, type ObjectStore } from './object-store.js';

export const DEV_BUCKET = 'plugflow-artifacts';
export const DEV_CREDENTIALS_SECRET = 'artifact-store-credentials';

export async function startDevArtifacts(
  client: KubeClient,
  namespaces: string[],
  dir: string,
  say: (line: string) => void,
): Promise<ObjectStore> {
  say('starting the object store for artifacts (MinIO)…');
  // A dev run's artifacts live as long as its cluster: what an earlier run in this directory left
  // belongs to a cluster that is gone (and to other credentials).
  rmSync(dir, { recursive: true, force: true });
  const store = await startObjectStore({ dir, log: say });
  const s3 = storeClient(
    { bucket: DEV_BUCKET, key: '', endpoint: store.endpoint, insecure: true },
    { accessKey: store.accessKey, secretKey: store.secretKey },
  );
  try {
    await s3.send(new CreateBucketCommand({ Bucket: DEV_BUCKET }));
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
  } finally {
    s3.destroy();
  }
  const repository = [
    'vendorAObject:',
    `  bucket: ${DEV_BUCKET}`,
    `  endpoint: ${store.endpoint}`,
    '  insecure: true',
    `  accessKeySecret: {name: ${DEV_CREDENTIALS_SECRET}, key: accesskey}`,
    `  secretKeySecret: {name: ${DEV_CREDENTIALS_SECRET}, key: secretkey}`,
    '',
  ].join('\n');
  for (const ns of namespaces) {
    await replace(client, SECRETS, ns, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: DEV_CREDENTIALS_SECRET, namespace: ns },
      stringData: { accesskey: store.accessKey, secretkey: store.secretKey },
    });
    await replace(client, CONFIGMAPS, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: REPOSITORIES_CONFIGMAP, namespace: ns, annotations: { [ANNOTATION_DEFAULT_REPOSITORY]: 'dev' } },
      data: { dev: repository },
    });
    say(`artifact repository for namespace ${ns}: s3://${DEV_BUCKET} at ${store.url} (ConfigMap ${ns}/${REPOSITORIES_CONFIGMAP})`);
  }
  return store;
}

/** Creates the object, or replaces the one an earlier dev run left (its credentials are stale). */
async function replace(
  client: KubeClient,
  type: typeof SECRETS,
  ns: string,
  body: { metadata: { name: string; namespace: string; annotations?: Record<string, string> }; [k: string]: unknown },
): Promise<void> {
  try {
    await client.create(type, ns, body);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    await client.delete(type, ns, body.metadata.name);
    await client.create(type, ns, body);
  }
}
