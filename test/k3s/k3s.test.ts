/**
 * The same install and CRD checks against k3s in a container, for machines with Docker.
 * Where no container runtime answers, the suite is skipped and says why.
 */
import { KubeConfig, type KubernetesObject, CustomObjectsApi } from '@kubernetes/client-node';
import { K3sContainer, type StartedK3sContainer } from '@testcontainers/k3s';
import { getContainerRuntimeClient } from 'testcontainers';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, VERSION } from '../../src/api/constants.js';
import { applyAndWait, readManifests } from '../../src/kube/apply.js';
import { REPO_ROOT } from '../support/apply.js';

async function dockerReason(): Promise<string | undefined> {
  try {
    await getContainerRuntimeClient();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const reason = await dockerReason();
if (reason) console.log(`[k3s suite] skipped: no container runtime (${reason.split('\n')[0]})`);

describe.skipIf(reason !== undefined)('install on k3s (testcontainers)', () => {
  let k3s: StartedK3sContainer;
  let kc: KubeConfig;

  beforeAll(async () => {
    k3s = await new K3sContainer('rancher/k3s:v1.31.2-k3s1').start();
    kc = new KubeConfig();
    kc.loadFromString(k3s.getKubeConfig());
  }, 300_000);
  afterAll(async () => {
    await k3s?.stop();
  });

  it('manifests/install.yaml applies and a Workflow round-trips', async () => {
    await applyAndWait(kc, readManifests(join(REPO_ROOT, 'manifests', 'install.yaml')));
    const api = kc.makeApiClient(CustomObjectsApi);
    const wf: KubernetesObject & { spec: object } = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Workflow',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'busybox', command: ['echo', 'hi'] } }] },
    };
    await api.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: 'workflows', body: wf });
    const back = (await api.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: 'default',
      plural: 'workflows',
      name: 'hello',
    })) as { spec: object };
    expect(back.spec).toEqual(wf.spec);
  });
});
