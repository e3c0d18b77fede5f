import { describe, expect, it } from 'vitest';
import type { Template, Workflow } from '../api/index.js';
import { FakeKubeClient } from '../kube/testing/fake-kube-client.js';
import { CONFIGMAPS } from '../kube/resource.js';
import type { ImageReference } from '../images/image-reference.js';
import { RegistryError, type ImageLookup } from '../images/registry-client.js';
import { ImageEntrypoints, ImageLookupError } from './image-entrypoints.js';

const wf: Workflow = { apiVersion: 'plugflow.io/v1alpha1', kind: 'Workflow', metadata: { name: 'w', namespace: 'team' }, spec: {} };
const step = (image: string): Template => ({ name: 's', container: { image } });
const DIGEST = `sha256:${'b'.repeat(64)}`;

/** A resolver whose registry is `answer`, counting the lookups it makes; `clock.now` is its time. */
function resolver(answer: (ref: ImageReference) => Promise<ImageLookup>) {
  const kube = new FakeKubeClient();
  const clock = { now: 1_000_000 };
  const asked: string[] = [];
  const images = new ImageEntrypoints({
    client: kube.asClient(),
    installNamespace: 'plugflow',
    now: () => clock.now,
    fetch: (ref) => {
      asked.push(`${ref.host}/${ref.repository}@${ref.reference}`);
      return answer(ref);
    },
  });
  return { kube, clock, asked, images };
}

describe('ImageEntrypoints', () => {
  it('asks the registry once for a fan-out of one image, concurrent or later', async () => {
    const r = resolver(async () => {
      await new Promise((res) => setTimeout(res, 5));
      return { digest: DIGEST, entrypoint: ['/say'], cmd: ['hi'] };
    });
    const all = await Promise.all(Array.from({ length: 50 }, () => r.images.forTemplate(wf, step('reg.io/say:1'), 'default')));
    expect(new Set(all.map((m) => JSON.stringify([...m!])))).toEqual(
      new Set([JSON.stringify([['reg.io/say:1', { entrypoint: ['/say'], cmd: ['hi'] }]])]),
    );
    await r.images.forTemplate(wf, step('reg.io/say:1'), 'other-account');
    expect(r.asked).toEqual(['reg.io/say@1']);
  });

  it('keeps a tag for 5 minutes and a digest for good', async () => {
    const r = resolver(async () => ({ digest: DIGEST, entrypoint: [], cmd: ['x'] }));
    await r.images.forTemplate(wf, step('reg.io/t:1'), 'default');
    await r.images.forTemplate(wf, step(`reg.io/d@${DIGEST}`), 'default');
    r.clock.now += 5 * 60_000;
    await r.images.forTemplate(wf, step('reg.io/t:1'), 'default');
    await r.images.forTemplate(wf, step(`reg.io/d@${DIGEST}`), 'default');
    expect(r.asked).toEqual(['reg.io/t@1', `reg.io/d@${DIGEST}`, 'reg.io/t@1']);
  });

  it('remembers a failure for 30 seconds, so a fan-out fails fast, then asks again', async () => {
    const r = resolver(async () => {
      throw new RegistryError('cannot reach reg.io: connection refused');
    });
    const fail = () => r.images.forTemplate(wf, step('reg.io/down:1'), 'default');
    await expect(fail()).rejects.toThrow(ImageLookupError);
    await expect(fail()).rejects.toThrow(
      'image "reg.io/down:1": its registry could not tell its entrypoint: cannot reach reg.io: connection refused; set the container\'s command, or list the image in ConfigMap plugflow/plugflow-images',
    );
    expect(r.asked).toHaveLength(1);
    r.clock.now += 30_000;
    await expect(fail()).rejects.toThrow(ImageLookupError);
    expect(r.asked).toHaveLength(2);
  });

  it('narrows a multi-platform image to the node selector’s os and arch, each remembered apart', async () => {
    const platforms: string[] = [];
    const kube = new FakeKubeClient();
    const images = new ImageEntrypoints({
      client: kube.asClient(),
      installNamespace: 'plugflow',
      fetch: async (_ref, _cred, opts) => {
        platforms.push(`${opts.platform?.os}/${opts.platform?.architecture}`);
        return { digest: DIGEST, entrypoint: [], cmd: [opts.platform!.architecture] };
      },
    });
    const arm = await images.forTemplate(
      { ...wf, spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } },
      step('reg.io/m:1'),
      'default',
    );
    const s390 = await images.forTemplate(wf, { ...step('reg.io/m:1'), nodeSelector: { 'kubernetes.io/arch': 's390x' } }, 'default');
    await images.forTemplate({ ...wf, spec: { nodeSelector: { 'kubernetes.io/arch': 'arm64' } } }, step('reg.io/m:1'), 'default');
    expect(arm?.get('reg.io/m:1')?.cmd).toEqual(['arm64']);
    expect(s390?.get('reg.io/m:1')?.cmd).toEqual(['s390x']);
    expect(platforms).toEqual(['linux/arm64', 'linux/s390x']);
  });

  it('takes the operator’s ConfigMap over the registry, and refuses a broken one by name', async () => {
    const r = resolver(async () => ({ digest: DIGEST, entrypoint: ['/from-registry'], cmd: [] }));
    r.kube.seed(CONFIGMAPS, {
      metadata: { name: 'plugflow-images', namespace: 'plugflow' },
      data: { images: 'reg.io/a:1: {cmd: [listed]}\n' },
    });
    const got = await r.images.forTemplate(wf, step('reg.io/a:1'), 'default');
    expect(got?.get('reg.io/a:1')).toEqual({ entrypoint: [], cmd: ['listed'] });
    expect(r.asked).toEqual([]);
    expect(await r.images.forTemplate(wf, { name: 's', container: { image: 'reg.io/a:1', command: ['own'] } }, 'default')).toBeUndefined();

    const broken = resolver(async () => ({ digest: DIGEST, entrypoint: [], cmd: [] }));
    broken.kube.seed(CONFIGMAPS, {
      metadata: { name: 'plugflow-images', namespace: 'plugflow' },
      data: { images: 'reg.io/a:1: {cmd: listed}\n' },
    });
    await expect(broken.images.forTemplate(wf, step('reg.io/b:1'), 'default')).rejects.toThrow(
      'ConfigMap plugflow/plugflow-images key images: image "reg.io/a:1": cmd must be a list of strings',
    );
  });
});
