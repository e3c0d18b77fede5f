/**
 * Containers without `command` run their image's ENTRYPOINT and CMD, read from real registries
 * (the CNCF distribution registry: open, htpasswd, and token auth as Docker Hub does it, with
 * images this test pushes), on the real API server with
 * RBAC on: the controller runs under its installed ClusterRole and reads pull secrets only as the
 * step's service account. The local pod runner then runs the resolved argv.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Template, Workflow } from '../src/api/index.js';
import { startController, type RunningController } from '../src/controller/controller.js';
import { impersonationBinding } from '../src/devenv/dev-stack.js';
import { applyObjects, readManifests } from '../src/kube/apply.js';
import { CONFIGMAPS, ROLE_BINDINGS, ROLES, SECRETS, SERVICE_ACCOUNTS, WORKFLOWS } from '../src/kube/resource.js';
import { IMAGES_CONFIGMAP } from '../src/images/known-images.js';
import { defaultPlatform } from '../src/images/registry-client.js';
import { captureLogger, eventually, startRunnerBed, waitForCompletion, workflow, type RunnerBed } from './controller-harness.js';
import { REPO_ROOT } from './support/apply.js';
import { adminKubeConfig, kubeConfigForToken, serviceAccountToken } from './support/cluster.js';
import { startImageRegistry, type ImageRegistry } from './support/image-registry.js';
import { pushImage, pushMultiPlatform } from './support/oci-images.js';

const PULLER = { user: 'puller', password: 'pull-me-9' };
/** The token registry (Docker Hub's way): library/* public, the rest for PULLER. */
const HUB = { ...PULLER, publicRepositories: ['library/hello'] };

describe('image entrypoints from a registry', () => {
  let bed: RunnerBed;
  let controller: RunningController;
  let open: ImageRegistry;
  let locked: ImageRegistry;
  let hub: ImageRegistry;
  let pinned: string;
  const { log } = captureLogger();

  const run = async (name: string, templates: Template[], spec: Partial<Workflow['spec']> = {}): Promise<Workflow> => {
    await bed.client.create(WORKFLOWS, bed.ns, workflow(name, { entrypoint: templates[0]!.name, templates, ...spec }));
    return waitForCompletion(bed.client, bed.ns, name, 60_000);
  };
  const result = (wf: Workflow, displayName: string): string | undefined =>
    Object.values(wf.status?.nodes ?? {}).find((n) => n.displayName === displayName)?.outputs?.result;

  beforeAll(async () => {
    const admin = adminKubeConfig();
    await applyObjects(admin, [
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'namespace.yaml')),
      ...readManifests(join(REPO_ROOT, 'manifests', 'base', 'rbac-controller.yaml')),
    ]);
    [bed, open, locked, hub] = await Promise.all([
      startRunnerBed('images'),
      startImageRegistry(),
      startImageRegistry({ htpasswd: PULLER }),
      startImageRegistry({ token: HUB }),
    ]);
    await pushImage(open.host, 'tools/echoer', '1', { entrypoint: ['sh', '-c'], cmd: ['echo from-cmd'] });
    await pushImage(open.host, 'tools/shell', '1', { cmd: ['sh', '-c', 'echo shell-cmd'] });
    pinned = (await pushImage(open.host, 'tools/pinned', '1', { entrypoint: ['sh', '-c', 'echo pinned'] })).digest;
    const arch = defaultPlatform().architecture;
    await pushMultiPlatform(open.host, 'tools/multi', '1', {
      [arch]: { entrypoint: ['sh', '-c', `echo built-for-${arch}`] },
      [arch === 'arm64' ? 'amd64' : 'arm64']: { entrypoint: ['sh', '-c', 'echo wrong-platform'] },
    });
    await pushImage(locked.host, 'team/secret-tool', '1', { entrypoint: ['sh', '-c', 'echo private'] }, PULLER);
    await pushImage(hub.host, 'library/hello', '1', { cmd: ['sh', '-c', 'echo hub-public'] }, PULLER);
    await pushImage(hub.host, 'team/hub-tool', '1', { cmd: ['sh', '-c', 'echo hub-private'] }, PULLER);

    const { ns, client } = bed;
    const auth = Buffer.from(`${PULLER.user}:${PULLER.password}`).toString('base64');
    const dockerConfig = JSON.stringify({ auths: { [locked.host]: { auth }, [`https://${hub.host}/v1/`]: { auth } } });
    await client.create(SECRETS, ns, {
      metadata: { name: 'regcred' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(dockerConfig).toString('base64') },
    });
    // puller may read the pull secret; sa-pull names it itself; blind may read nothing.
    await client.create(SERVICE_ACCOUNTS, ns, { metadata: { name: 'puller' } });
    await client.create(SERVICE_ACCOUNTS, ns, { metadata: { name: 'sa-pull' }, imagePullSecrets: [{ name: 'regcred' }] });
    await client.create(SERVICE_ACCOUNTS, ns, { metadata: { name: 'blind' } });
    await client.create(ROLES, ns, {
      metadata: { name: 'read-regcred' },
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['regcred'], verbs: ['get'] }],
    });
    await client.create(ROLE_BINDINGS, ns, {
      metadata: { name: 'read-regcred' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-regcred' },
      subjects: ['puller', 'sa-pull'].map((name) => ({ kind: 'ServiceAccount', name, namespace: ns })),
    });
    // README "Install": the namespace lets the controller act as its accounts (here: to read pull secrets as them).
    await client.create(ROLE_BINDINGS, ns, impersonationBinding(ns));
    // The operator's list, in the controller's installation namespace (this test's own).
    await client.create(CONFIGMAPS, ns, {
      metadata: { name: IMAGES_CONFIGMAP },
      data: { images: 'registry.unreachable.invalid/tools/listed:2:\n  entrypoint: [sh, -c]\n  cmd: [echo listed]\n' },
    });
    const token = await eventually(() => serviceAccountToken('plugflow', 'plugflow-controller'), 'a controller token');
    controller = await startController({
      kubeConfig: kubeConfigForToken(token, 'plugflow-controller'),
      namespace: ns,
      installNamespace: ns,
      insecureRegistries: [open.host, locked.host, hub.host, hub.tokenHost!],
      processMetrics: false,
      log,
    });
  }, 180_000);

  afterAll(async () => {
    await controller?.stop();
    await bed?.stop();
    await open?.stop();
    await locked?.stop();
    await hub?.stop();
  });

  it('runs ENTRYPOINT with CMD, ENTRYPOINT with args, CMD alone, and the platform entry of an index', async () => {
    const wf = await run('entrypoints', [
      {
        name: 'main',
        steps: [
          [
            { name: 'cmd', template: 'cmd' },
            { name: 'args', template: 'args' },
            { name: 'shell', template: 'shell' },
            { name: 'multi', template: 'multi' },
            { name: 'set', template: 'set' },
            { name: 'hub', template: 'hub' },
          ],
        ],
      },
      { name: 'cmd', container: { image: `${open.host}/tools/echoer:1` } },
      { name: 'args', container: { image: `${open.host}/tools/echoer:1`, args: ['echo from-args'] } },
      { name: 'shell', container: { image: `${open.host}/tools/shell:1` } },
      { name: 'multi', container: { image: `${open.host}/tools/multi:1` } },
      // A token registry's public repository: an anonymous token.
      { name: 'hub', container: { image: `${hub.host}/library/hello:1` } },
      {
        name: 'set',
        containerSet: {
          containers: [
            { name: 'first', image: `${open.host}/tools/echoer:1`, args: ['echo first'] },
            { name: 'main', image: `${open.host}/tools/pinned@${pinned}`, dependencies: ['first'] },
          ],
        },
      },
    ]);
    expect(wf.status?.phase, wf.status?.message).toBe('Succeeded');
    expect(result(wf, 'cmd')).toBe('from-cmd');
    expect(result(wf, 'args')).toBe('from-args');
    expect(result(wf, 'shell')).toBe('shell-cmd');
    expect(result(wf, 'multi')).toBe(`built-for-${defaultPlatform().architecture}`);
    expect(result(wf, 'set')).toBe('pinned');
    expect(result(wf, 'hub')).toBe('hub-public');
  }, 90_000);

  it('reads pull secrets as the step service account: workflow imagePullSecrets or the account’s own', async () => {
    const image = `${locked.host}/team/secret-tool:1`;
    const [named, own, blind, token] = await Promise.all([
      run('private-named', [{ name: 'main', container: { image } }], {
        serviceAccountName: 'puller',
        imagePullSecrets: [{ name: 'regcred' }],
      }),
      run('private-own', [{ name: 'main', container: { image } }], { serviceAccountName: 'sa-pull' }),
      run('private-blind', [{ name: 'main', container: { image } }], {
        serviceAccountName: 'blind',
        imagePullSecrets: [{ name: 'regcred' }],
      }),
      run('private-token', [{ name: 'main', container: { image: `${hub.host}/team/hub-tool:1` } }], { serviceAccountName: 'sa-pull' }),
    ]);
    expect(named.status?.phase, named.status?.message).toBe('Succeeded');
    expect(result(named, 'private-named')).toBe('private');
    expect(own.status?.phase, own.status?.message).toBe('Succeeded');
    // Basic (htpasswd) above; a token service asked with the secret's credentials here.
    expect(token.status?.phase, token.status?.message).toBe('Succeeded');
    expect(result(token, 'private-token')).toBe('hub-private');
    // The controller itself may not read Secrets, and does not lend its rights: blind cannot.
    expect(blind.status?.phase).toBe('Failed');
    const message = Object.values(blind.status?.nodes ?? {}).find((n) => n.type === 'Pod')?.message ?? '';
    expect(message).toContain(`image "${image}": ${locked.host} refused an anonymous pull`);
    expect(message).toContain(`service account ${bed.ns}/blind may not read secret regcred (grant it get on secrets/regcred)`);
    expect(message).not.toContain(PULLER.password);
  }, 90_000);

  it('takes the operator’s images ConfigMap first, and says what to do when no one knows an image', async () => {
    const [listed, unknown] = await Promise.all([
      run('listed', [{ name: 'main', container: { image: 'registry.unreachable.invalid/tools/listed:2' } }]),
      run('unknown', [{ name: 'main', container: { image: '127.0.0.1:1/tools/none:1' } }]),
    ]);
    expect(listed.status?.phase, listed.status?.message).toBe('Succeeded');
    expect(result(listed, 'listed')).toBe('listed');
    expect(unknown.status?.phase).toBe('Failed');
    const message = Object.values(unknown.status?.nodes ?? {}).find((n) => n.type === 'Pod')?.message ?? '';
    // What the remote answered (here: a refused port) stays in the controller's log, not in the message.
    expect(message).toMatch(/image "127\.0\.0\.1:1\/tools\/none:1": its registry 127\.0\.0\.1:1 could not be read/);
    expect(message).not.toMatch(/ECONNREFUSED|refused|HTTP \d/);
    expect(message).toContain(`set the container's command, or list the image in ConfigMap ${bed.ns}/${IMAGES_CONFIGMAP}`);
  }, 90_000);

  it('remembers what it learnt: with the registry gone, the same images still run', async () => {
    await open.stop();
    const wf = await run('cached', [
      {
        name: 'main',
        steps: [
          [
            { name: 'tag', template: 'tag' },
            { name: 'digest', template: 'digest' },
          ],
        ],
      },
      { name: 'tag', container: { image: `${open.host}/tools/echoer:1`, args: ['echo cached'] } },
      { name: 'digest', container: { image: `${open.host}/tools/pinned@${pinned}` } },
    ]);
    expect(wf.status?.phase, wf.status?.message).toBe('Succeeded');
    expect(result(wf, 'tag')).toBe('cached');
    expect(result(wf, 'digest')).toBe('pinned');
  }, 90_000);
});
